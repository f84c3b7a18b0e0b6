package dev.hamilock.core.store;

/** A key of the lock's memos: one exact lock value on one node. */
record NodeValue(String node, String value) {}

/**
 * The backend port {@link dev.hamilock.core.store.LockStore} (four atomic operations on one value
 * per node and key; its compare-and-set operations return their witness as a {@link
 * dev.hamilock.core.store.CasResult}), HAMi's lock semantics implemented once over it ({@link
 * dev.hamilock.core.store.StoreNodeLock}, deciding with the pure {@link
 * dev.hamilock.core.store.LockJudgement}), and the in-memory backend ({@link
 * dev.hamilock.core.store.InMemoryLockStore}, {@link dev.hamilock.core.store.InMemoryNodeLock}).
 */
package dev.hamilock.core.store;

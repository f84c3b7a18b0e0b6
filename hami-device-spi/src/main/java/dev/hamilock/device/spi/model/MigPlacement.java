package dev.hamilock.device.spi.model;

/** A MIG placement of a profile (HAMi {@code MigPlacement}): first slice index, slice count. */
public record MigPlacement(int start, int size) {}

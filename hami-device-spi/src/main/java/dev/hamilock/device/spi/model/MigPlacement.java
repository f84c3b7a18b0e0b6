package dev.hamilock.device.spi.model;

/**
 * One MIG placement slot of a profile (HAMi {@code MigPlacement}, {@code pkg/device/devices.go}).
 *
 * @param start first memory slice index
 * @param size number of slices
 */
public record MigPlacement(int start, int size) {}

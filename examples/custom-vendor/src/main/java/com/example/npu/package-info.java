/**
 * Example third-party device vendor {@code example.com/npu} (CommonWord {@code NPU}) for the
 * hami-lock device SPI: count and memory resources, its own node lock key and registration
 * annotation, discovered through {@link java.util.ServiceLoader}.
 */
package com.example.npu;

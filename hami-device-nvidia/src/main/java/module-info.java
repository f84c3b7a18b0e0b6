/** HAMi's NVIDIA vendor (CommonWord {@code NVIDIA}) for the hami-lock device SPI. */
module dev.hamilock.device.nvidia {
  requires transitive dev.hamilock.device.spi;

  exports dev.hamilock.device.nvidia;

  provides dev.hamilock.device.spi.DeviceVendor with dev.hamilock.device.nvidia.NvidiaVendor;
}

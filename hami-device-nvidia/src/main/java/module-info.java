/** HAMi's NVIDIA vendor (CommonWord {@code NVIDIA}) for the hami-lock device SPI. */
module dev.hamilock.device.nvidia {
  requires transitive dev.hamilock.device.spi;
  requires org.slf4j;

  exports dev.hamilock.device.nvidia;

  provides dev.hamilock.device.spi.DeviceVendor with
      dev.hamilock.device.nvidia.NvidiaVendor;
}

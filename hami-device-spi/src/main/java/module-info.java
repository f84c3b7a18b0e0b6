/**
 * HAMi-compatible device vendor SPI: neutral pod/node views, the device model, HAMi annotation
 * codecs, usage reconstruction, vendor-neutral fit and scoring. No Kubernetes client.
 */
module dev.hamilock.device.spi {
  requires org.slf4j;
  requires com.fasterxml.jackson.databind;
  requires com.google.common;

  exports dev.hamilock.device.spi;
  exports dev.hamilock.device.spi.view;
  exports dev.hamilock.device.spi.model;
  exports dev.hamilock.device.spi.codec;
  exports dev.hamilock.device.spi.usage;
  exports dev.hamilock.device.spi.fit;

  opens dev.hamilock.device.spi.codec to com.fasterxml.jackson.databind;

  uses dev.hamilock.device.spi.DeviceVendor;
}

/**
 * HAMi-compatible device vendor SPI: neutral pod/node views and the one schema-free Pod/Node JSON
 * reader ({@code JsonViews}), the device model, HAMi annotation codecs, usage reconstruction,
 * vendor-neutral fit and scoring. No Kubernetes client.
 */
module dev.hamilock.device.spi {
  requires org.slf4j;
  // JsonViews reads Jackson trees (the extender hands it the Pod/Node of its payload): transitive
  requires transitive com.fasterxml.jackson.databind;
  requires com.google.common;

  exports dev.hamilock.device.spi;
  exports dev.hamilock.device.spi.view;
  exports dev.hamilock.device.spi.model;
  exports dev.hamilock.device.spi.codec;
  exports dev.hamilock.device.spi.usage;
  exports dev.hamilock.device.spi.fit;
  exports dev.hamilock.device.spi.preempt;

  opens dev.hamilock.device.spi.codec to
      com.fasterxml.jackson.databind;

  uses dev.hamilock.device.spi.DeviceVendor;
}

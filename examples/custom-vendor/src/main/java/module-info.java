/**
 * A third party's device vendor for hami-lock: {@code example.com/npu}. It depends on nothing but
 * the device SPI and registers itself as a service, so hami-lock's {@code
 * VendorRegistry.discover()} finds it on the module path and on the class path alike.
 */
module com.example.npu {
  requires transitive dev.hamilock.device.spi;

  exports com.example.npu;

  provides dev.hamilock.device.spi.DeviceVendor with
      com.example.npu.NpuVendor;
}

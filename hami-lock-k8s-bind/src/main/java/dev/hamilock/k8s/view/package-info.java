/** client-java models → {@code hami-device-spi} views and core lock owners. */
package dev.hamilock.k8s.view;

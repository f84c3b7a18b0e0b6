/**
 * hami-lock core: the HAMi node-lock vocabulary and algorithms, free of any Kubernetes client.
 */
module dev.hamilock.core {
    requires dev.failsafe.core;
    requires org.slf4j;

    exports dev.hamilock.core;
}

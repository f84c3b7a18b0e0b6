/** Raw schema-free HTTP over client-java and failure classification; not exported. */
package dev.hamilock.k8s.internal;

package dev.hamilock.testkit.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A test method that runs once per Kubernetes backend, each invocation getting a {@link
 * dev.hamilock.testkit.KubeBackend} parameter (also in {@code @BeforeEach}/{@code @AfterEach}).
 *
 * <p>Which backends: the system property {@value BackendExtension#BACKENDS_PROPERTY}, a comma list
 * of {@code emulator} and {@code real-apiserver} (default {@code emulator}). The root pom sets it:
 * {@code mvn verify} runs the emulator invocations, {@code mvn verify -Preal-apiserver} runs the
 * real-server ones (the methods carry the tag {@value BackendExtension#TAG}, which that profile
 * selects). The emulator is started once per test class, the real server once per test JVM. A
 * backend that cannot start fails each of its invocations with the reason; nothing is skipped.
 */
// exports: JUnit is an optional (requires static) dependency, present wherever this is used;
// a transitive requires would force it on every user of the module
@SuppressWarnings("exports")
@Target({ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@TestTemplate
@ExtendWith(BackendExtension.class)
@Tag(BackendExtension.TAG)
public @interface BackendTest {}

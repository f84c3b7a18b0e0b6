package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.FileInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTPS with client certificates (kube-scheduler's {@code enableHTTPS} + {@code tlsConfig}) and the
 * reload of the PEM files. Certificates are made with the JDK's keytool (self-signed, SAN
 * 127.0.0.1).
 */
class ExtenderTlsTest {
  private static final char[] PW = "changeit".toCharArray();

  @TempDir Path dir;

  private Path keystore(String name, String cn) throws Exception {
    Path ks = dir.resolve(name + ".p12");
    Files.deleteIfExists(ks);
    String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
    Process p =
        new ProcessBuilder(
                keytool,
                "-genkeypair",
                "-alias",
                name,
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-dname",
                "CN=" + cn,
                "-ext",
                "san=ip:127.0.0.1",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                ks.toString(),
                "-storepass",
                new String(PW))
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(new String(p.getInputStream().readAllBytes())).isZero();
    return ks;
  }

  private static KeyStore load(Path p) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = new FileInputStream(p.toFile())) {
      ks.load(in, PW);
    }
    return ks;
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  /** Writes name.crt and name.key (PKCS#8) from the keystore; returns the certificate. */
  private X509Certificate exportPem(Path ks, String name, Path crt, Path key) throws Exception {
    KeyStore k = load(ks);
    X509Certificate c = (X509Certificate) k.getCertificate(name);
    Files.writeString(crt, pem("CERTIFICATE", c.getEncoded()));
    Files.writeString(key, pem("PRIVATE KEY", k.getKey(name, PW).getEncoded()));
    return c;
  }

  private static SSLContext client(X509Certificate serverCert, Path clientKs) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("server", serverCert);
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    if (clientKs != null) {
      kmf.init(load(clientKs), PW);
    } else {
      KeyStore empty = KeyStore.getInstance("PKCS12");
      empty.load(null, null);
      kmf.init(empty, PW);
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return ctx;
  }

  private static HttpResponse<String> get(SSLContext ctx, int port) throws Exception {
    HttpClient c =
        HttpClient.newBuilder().sslContext(ctx).connectTimeout(Duration.ofSeconds(5)).build();
    return c.send(
        HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/healthz"))
            .timeout(Duration.ofSeconds(10))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String servedSubject(SSLContext ctx, int port) throws Exception {
    try (SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
      s.setSoTimeout(5000);
      s.startHandshake();
      return ((X509Certificate) s.getSession().getPeerCertificates()[0])
          .getSubjectX500Principal()
          .getName();
    }
  }

  @Test
  void clientCertificatesAreRequiredAndTheServingCertificateIsReloaded() throws Exception {
    Path crt = dir.resolve("tls.crt");
    Path key = dir.resolve("tls.key");
    Path ca = dir.resolve("client-ca.crt");
    X509Certificate server1 = exportPem(keystore("server", "extender-one"), "server", crt, key);
    Path clientKs = keystore("client", "kube-scheduler");
    Files.writeString(ca, pem("CERTIFICATE", load(clientKs).getCertificate("client").getEncoded()));
    Path strangerKs = keystore("stranger", "someone-else");

    TestCluster t = new TestCluster(Duration.ofSeconds(1));
    ServingConfig tls =
        new ServingConfig(
            16,
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            1 << 20,
            8 << 20,
            5000,
            4,
            List.of("hami-scheduler"),
            Optional.of(crt),
            Optional.of(key),
            Optional.of(ca),
            java.util.OptionalInt.empty());
    ExtenderConfig c = ExtenderConfig.builder().port(0).serving(tls).build();
    try (ExtenderServer s = ExtenderServer.builder(c, t.extender).start()) {
      assertThat(get(client(server1, clientKs), s.port()).body()).isEqualTo("ok");
      assertThatThrownBy(() -> get(client(server1, null), s.port()))
          .as("no client certificate")
          .isInstanceOf(java.io.IOException.class);
      assertThatThrownBy(() -> get(client(server1, strangerKs), s.port()))
          .as("certificate of another CA")
          .isInstanceOf(java.io.IOException.class);

      // rotate the serving certificate: the server picks it up without a restart
      X509Certificate server2 = exportPem(keystore("server2", "extender-two"), "server2", crt, key);
      SSLContext trustsBoth = client(server2, clientKs);
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      String subject = "";
      while (System.nanoTime() < until) {
        try {
          subject = servedSubject(trustsBoth, s.port());
          break;
        } catch (java.io.IOException stillTheOldOne) {
          Thread.sleep(100);
        }
      }
      assertThat(subject).isEqualTo("CN=extender-two");
      assertThat(get(trustsBoth, s.port()).body()).isEqualTo("ok");
    }
  }

  @Test
  void halfATlsConfigurationRefusesToStart() {
    assertThatThrownBy(() -> ExtenderConfig.parse("--tls-cert-file=/x.crt"))
        .hasMessageContaining("--tls-cert-file and --tls-private-key-file go together");
    assertThatThrownBy(() -> ExtenderConfig.parse("--client-ca-file=/ca.crt"))
        .hasMessageContaining("--client-ca-file needs --tls-cert-file");
    ExtenderConfig ok =
        ExtenderConfig.parse(
            "--tls-cert-file=/a.crt",
            "--tls-private-key-file=/a.key",
            "--scheduler-name=hami-scheduler, volcano",
            "--max-filter-nodes=100");
    assertThat(ok.serving().tls()).isTrue();
    assertThat(ok.serving().schedulerNames()).containsExactly("hami-scheduler", "volcano");
    assertThat(ok.bindAddress()).isEqualTo("127.0.0.1");
    assertThat(ExtenderConfig.parse(ok.toArgs().toArray(String[]::new))).isEqualTo(ok);
  }
}

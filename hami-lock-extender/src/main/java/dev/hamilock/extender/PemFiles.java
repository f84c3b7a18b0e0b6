package dev.hamilock.extender;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PEM files turned into JDK key stores. Keys: PKCS#8 ({@code PRIVATE KEY}) or PKCS#1 ({@code RSA
 * PRIVATE KEY}); a SEC1 {@code EC PRIVATE KEY} is refused with the openssl command converting it.
 */
final class PemFiles {
  static final char[] PASSWORD = "hami-extender".toCharArray();
  private static final Pattern BLOCK =
      Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");

  private PemFiles() {}

  /** A key store with alias {@code serving}: the key and the certificate chain. */
  static KeyStore servingKeyStore(Path certFile, Path keyFile)
      throws IOException, GeneralSecurityException {
    List<Certificate> chain = certificates(certFile);
    KeyStore ks = emptyStore();
    ks.setKeyEntry("serving", privateKey(keyFile), PASSWORD, chain.toArray(Certificate[]::new));
    return ks;
  }

  /** A trust store with every certificate of the bundle. */
  static KeyStore trustStore(Path caFile) throws IOException, GeneralSecurityException {
    List<Certificate> cas = certificates(caFile);
    KeyStore ks = emptyStore();
    for (int i = 0; i < cas.size(); i++) {
      ks.setCertificateEntry("ca-" + i, cas.get(i));
    }
    return ks;
  }

  private static KeyStore emptyStore() throws IOException, GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    return ks;
  }

  /** The file's certificates, at least one. */
  private static List<Certificate> certificates(Path file)
      throws IOException, GeneralSecurityException {
    CertificateFactory cf = CertificateFactory.getInstance("X.509");
    List<Certificate> out = new ArrayList<>();
    for (Map.Entry<String, byte[]> b : blocks(file)) {
      if (b.getKey().equals("CERTIFICATE")) {
        out.addAll(cf.generateCertificates(new ByteArrayInputStream(b.getValue())));
      }
    }
    if (out.isEmpty()) {
      throw new GeneralSecurityException("no CERTIFICATE block in " + file);
    }
    return out;
  }

  static PrivateKey privateKey(Path file) throws IOException, GeneralSecurityException {
    for (Map.Entry<String, byte[]> b : blocks(file)) {
      byte[] der = b.getValue();
      switch (b.getKey()) {
        case "PRIVATE KEY" -> {
          return pkcs8(der, file);
        }
        case "RSA PRIVATE KEY" -> {
          return KeyFactory.getInstance("RSA")
              .generatePrivate(new PKCS8EncodedKeySpec(wrapRsa(der)));
        }
        case "EC PRIVATE KEY" ->
            throw new GeneralSecurityException(
                "SEC1 EC key in "
                    + file
                    + " is not supported; convert it: openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pkcs8");
        default -> {
          // e.g. EC PARAMETERS before the key: skip
        }
      }
    }
    throw new GeneralSecurityException("no PRIVATE KEY or RSA PRIVATE KEY block in " + file);
  }

  private static PrivateKey pkcs8(byte[] der, Path file) throws GeneralSecurityException {
    for (String alg : List.of("RSA", "EC", "Ed25519")) {
      try {
        return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (GeneralSecurityException e) {
        // try the next algorithm
      }
    }
    throw new GeneralSecurityException(
        "PRIVATE KEY in " + file + " is not an RSA, EC or Ed25519 key");
  }

  /** PKCS#1 RSAPrivateKey inside a PKCS#8 PrivateKeyInfo (version 0, rsaEncryption, NULL). */
  private static byte[] wrapRsa(byte[] pkcs1) {
    byte[] head = HexFormat.of().parseHex("020100" + "300d06092a864886f70d0101010500");
    byte[] octet = der(0x04, pkcs1);
    return der(0x30, ByteBuffer.allocate(head.length + octet.length).put(head).put(octet).array());
  }

  /** A DER TLV: short length form below 128 bytes, else 0x80 | count of big-endian length bytes. */
  private static byte[] der(int tag, byte[] content) {
    int n = content.length;
    int k = n < 0x80 ? 0 : n < 0x100 ? 1 : n < 0x10000 ? 2 : 3;
    byte[] out = new byte[2 + k + n];
    out[0] = (byte) tag;
    out[1] = (byte) (k == 0 ? n : 0x80 | k);
    for (int i = 0; i < k; i++) {
      out[2 + i] = (byte) (n >> (8 * (k - 1 - i)));
    }
    System.arraycopy(content, 0, out, 2 + k, n);
    return out;
  }

  /** The PEM blocks of a file, in order: type ({@code CERTIFICATE}, ...) and DER bytes. */
  private static List<Map.Entry<String, byte[]>> blocks(Path file) throws IOException {
    Matcher m = BLOCK.matcher(Files.readString(file, StandardCharsets.US_ASCII));
    List<Map.Entry<String, byte[]>> out = new ArrayList<>();
    while (m.find()) {
      out.add(Map.entry(m.group(1), Base64.getMimeDecoder().decode(m.group(2))));
    }
    return out;
  }

  /** The serving key store and trust store behind HTTPS, reloaded when the files change. */
  static final class Tls {
    private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);
    private final Path cert;
    private final Path key;
    private final Optional<Path> ca;
    private final SslContextFactory.Server factory = new SslContextFactory.Server();
    private byte[] digest;

    /**
     * @throws IOException naming the flags and files when they cannot be read or used
     */
    Tls(Path cert, Path key, Optional<Path> ca) throws IOException {
      this.cert = cert;
      this.key = key;
      this.ca = ca;
      try {
        factory.setKeyStore(servingKeyStore(cert, key));
        factory.setKeyStorePassword(new String(PASSWORD));
        factory.setKeyManagerPassword(new String(PASSWORD));
        if (ca.isPresent()) {
          factory.setTrustStore(trustStore(ca.get()));
          factory.setNeedClientAuth(true);
        }
        factory.setIncludeProtocols("TLSv1.3", "TLSv1.2");
        digest = digest();
      } catch (GeneralSecurityException e) {
        String files = ca.map(c -> " / --client-ca-file " + c).orElse("");
        throw new IOException(
            "cannot use --tls-cert-file %s / --tls-private-key-file %s%s: %s"
                .formatted(cert, key, files, e.getMessage()),
            e);
      }
    }

    SslContextFactory.Server factory() {
      return factory;
    }

    private byte[] digest() throws IOException, GeneralSecurityException {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(Files.readAllBytes(cert));
      md.update(Files.readAllBytes(key));
      if (ca.isPresent()) {
        md.update(Files.readAllBytes(ca.get()));
      }
      return md.digest();
    }

    /** Reloads the stores when the files' content changed; keeps the previous ones if unusable. */
    void reloadIfChanged() {
      try {
        byte[] now = digest();
        if (Arrays.equals(now, digest)) {
          return;
        }
        KeyStore ks = servingKeyStore(cert, key);
        KeyStore ts = ca.isPresent() ? trustStore(ca.get()) : null;
        factory.reload(
            f -> {
              f.setKeyStore(ks);
              if (ts != null) {
                f.setTrustStore(ts);
              }
            });
        digest = now;
        LOG.info("reloaded the TLS files {} {}{}", cert, key, ca.map(c -> " " + c).orElse(""));
      } catch (Exception e) {
        LOG.warn(
            "TLS files changed but cannot be used yet (keeping the previous ones): {}",
            e.getMessage());
      }
    }
  }
}

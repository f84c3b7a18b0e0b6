package dev.hamilock.extender;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.util.Arrays;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PemFiles reads the two RSA key encodings openssl writes: PKCS#8 and PKCS#1 (traditional). */
class PemFilesTest {

  @TempDir Path dir;

  @Test
  void aPkcs1RsaKeyReadsAsTheSameKeyAsItsPkcs8Form() throws Exception {
    KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
    g.initialize(2048);
    byte[] pkcs8 = g.generateKeyPair().getPrivate().getEncoded();
    // PrivateKeyInfo: SEQUENCE(4) version(3) AlgorithmIdentifier(15) OCTET STRING header(4), then
    // the PKCS#1 RSAPrivateKey (2048-bit keys: long-form lengths of two bytes)
    byte[] pkcs1 = Arrays.copyOfRange(pkcs8, 26, pkcs8.length);
    assertThat(pkcs8[22]).isEqualTo((byte) 0x04);

    Path file = dir.resolve("key.pem");
    Files.writeString(
        file,
        "-----BEGIN RSA PRIVATE KEY-----\n"
            + Base64.getMimeEncoder().encodeToString(pkcs1)
            + "\n-----END RSA PRIVATE KEY-----\n");
    PrivateKey read = PemFiles.privateKey(file);

    assertThat(read.getAlgorithm()).isEqualTo("RSA");
    assertThat(read.getEncoded()).isEqualTo(pkcs8);
  }
}

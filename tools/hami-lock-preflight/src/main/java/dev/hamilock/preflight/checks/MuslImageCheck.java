package dev.hamilock.preflight.checks;

import dev.hamilock.preflight.check.Finding;
import dev.hamilock.preflight.check.Severity;
import dev.hamilock.preflight.manifest.YamlPath;
import dev.hamilock.preflight.model.ContainerSpec;
import dev.hamilock.preflight.model.ManifestModel;
import dev.hamilock.preflight.model.PodTemplate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * PF09 {@code musl-image-gpu}: a container requesting HAMi GPU resources runs an image that is
 * musl-based or static — {@code alpine}, {@code busybox} (unless its tag says {@code glibc}), or
 * any image whose repository or tag has an {@code alpine} word (also with a version: {@code
 * python:3.12-alpine3.19}) or a {@code musl} word ({@link #isMusl}). HAMi's in-container library
 * (HAMi-core, injected with {@code LD_PRELOAD}) is built against glibc: the process fails with
 * {@code libdl.so.2: cannot open shared object file}, or the limits are silently not enforced.
 * Judged from the image name only. Severity ERROR.
 */
public final class MuslImageCheck extends AbstractCheck {

  private static final Set<String> MUSL_WORDS = Set.of("alpine", "alpinelinux", "musl", "muslrust");

  /** Creates the check. */
  public MuslImageCheck() {
    super(
        "PF09",
        "musl-image-gpu",
        "musl-based images (alpine, busybox, *-musl) must not request HAMi GPU resources.");
  }

  @Override
  public List<Finding> run(ManifestModel model) {
    List<Finding> out = new ArrayList<>();
    for (PodTemplate t : model.podTemplates()) {
      for (ContainerSpec c : t.containers()) {
        if (c.image().isEmpty() || !GpuResources.requestsHami(c) || !isMusl(c.image().get())) {
          continue;
        }
        out.add(
            finding(
                Severity.ERROR,
                t.document().location(YamlPath.key(c.path(), "image")),
                "Container \""
                    + c.name()
                    + "\" of "
                    + t.describe()
                    + " requests HAMi GPU resources but runs \""
                    + c.image().get()
                    + "\", a musl-based (or static busybox) image: HAMi's LD_PRELOAD library "
                    + "is built on glibc (libdl.so.2: cannot open shared object file), so the container fails "
                    + "or runs without GPU memory and core limits.",
                "Use a glibc-based image (e.g. ubuntu, debian, nvidia/cuda, python:<version>-slim) for containers "
                    + "that request nvidia.com/gpu*."));
      }
    }
    return out;
  }

  /**
   * Whether the reference names a musl-based (or static busybox) image. Words are the repository
   * path and tag split at {@code / - _ :} (dots stay inside a word, so versions stay whole); a word
   * is musl when it is {@code alpine} or {@code alpine} followed by a version ({@code alpine3.19},
   * {@code alpine3}: {@code python:3.12-alpine3.19}, {@code node:20-alpine3.18}, {@code
   * nginx:stable-alpine3.19-perl}), {@code alpinelinux} (the {@code alpinelinux/*} images), or
   * {@code musl} / {@code muslrust} ({@code busybox:1.36-musl}, {@code clux/muslrust}). {@code
   * busybox} is static unless its tag says {@code glibc}. Not musl: {@code distroless} (glibc
   * {@code base}/{@code cc}; its {@code static} image has no libc and no loader at all, which
   * HAMi's LD_PRELOAD cannot use either, but that is not a musl word), {@code wolfi}/{@code
   * chainguard} (glibc), a digest.
   *
   * @param image an image reference such as {@code docker.io/library/python:3.12-alpine@sha256:...}
   * @return whether its name says musl or static busybox
   */
  static boolean isMusl(String image) {
    String ref = image.trim().toLowerCase(Locale.ROOT);
    int at = ref.indexOf('@');
    if (at >= 0) {
      ref = ref.substring(0, at);
    }
    int slash = ref.lastIndexOf('/');
    int colon = ref.lastIndexOf(':');
    String tag = colon > slash ? ref.substring(colon + 1) : "";
    String repo = colon > slash ? ref.substring(0, colon) : ref;
    String last = repo.substring(repo.lastIndexOf('/') + 1);
    if (last.equals("busybox")) {
      return !tag.contains("glibc");
    }
    List<String> words = new ArrayList<>(Arrays.asList(repo.split("[-_/]")));
    words.addAll(Arrays.asList(tag.split("[-_]")));
    return words.stream().anyMatch(MuslImageCheck::isMuslWord);
  }

  private static boolean isMuslWord(String w) {
    return MUSL_WORDS.contains(w) || ALPINE_VERSION.matcher(w).matches();
  }

  /**
   * {@code alpine} followed by a version, e.g. {@code alpine3.19}, {@code alpine3}, {@code
   * alpine3.19.1}.
   */
  private static final Pattern ALPINE_VERSION = Pattern.compile("alpine[0-9]+(\\.[0-9]+)*");
}

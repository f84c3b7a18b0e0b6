package dev.hamilock.testkit;

import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@link RealApiServer} could not start, answer or stop. The message names the cause and the fix
 * (for example "run testing/realcluster/build").
 */
public final class RealApiServerException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Path directory;
  private final long pid;

  /**
   * @param message cause and fix
   */
  public RealApiServerException(String message) {
    this(message, null, null, -1);
  }

  /**
   * @param message cause and fix
   * @param cause the underlying failure, may be null
   */
  public RealApiServerException(String message, Throwable cause) {
    this(message, cause, null, -1);
  }

  RealApiServerException(String message, Throwable cause, Path directory, long pid) {
    super(message, cause);
    this.directory = directory;
    this.pid = pid;
  }

  /**
   * @return the launcher's temporary directory, if it had announced one (removed by now)
   */
  public Optional<Path> directory() {
    return Optional.ofNullable(directory);
  }

  /**
   * @return the launcher's process id, if it had been started (stopped by now)
   */
  public OptionalLong pid() {
    return pid < 0 ? OptionalLong.empty() : OptionalLong.of(pid);
  }
}

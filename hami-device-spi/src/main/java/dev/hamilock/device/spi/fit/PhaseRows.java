package dev.hamilock.device.spi.fit;

import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerRole;
import java.util.List;
import java.util.Objects;

/**
 * The device rows each container of one pod is placed on, so that every card's peak over the pod's
 * phases is what its fit checks, by the rule of {@link
 * dev.hamilock.device.spi.usage.UsageReconstructor#collapse}: a sidecar goes cumulatively on the
 * sidecar rows, an init container on a fresh copy of them, app containers cumulatively on one copy
 * taken at the first app. Fit container {@code ci} on {@link #forContainer(int)} and write its
 * allocation into that array. Not thread-safe; one instance per pod and node.
 */
public final class PhaseRows {
  private final List<ContainerRole> roles;
  private final DeviceUsage[] sidecars;
  private DeviceUsage[] apps;

  private PhaseRows(List<ContainerRole> roles, DeviceUsage[] pre) {
    this.roles = roles;
    this.sidecars = pre.clone();
  }

  /**
   * Starts with one role per container in allocation order ({@link PodRequests#roles()}) and the
   * node's rows before this pod ({@code pre}, not modified).
   */
  public static PhaseRows start(List<ContainerRole> roles, DeviceUsage[] pre) {
    return new PhaseRows(List.copyOf(roles), Objects.requireNonNull(pre, "pre"));
  }

  /**
   * The rows container {@code ci} is fitted on and whose entries its allocation updates. Call in
   * increasing {@code ci} (skipping is fine); an index past the roles counts as an app container.
   * The rows are shared with later containers of the same phase.
   */
  public DeviceUsage[] forContainer(int ci) {
    ContainerRole role = ci < roles.size() ? roles.get(ci) : ContainerRole.APP;
    return switch (role) {
      case SIDECAR -> sidecars;
      case INIT -> sidecars.clone();
      case APP -> apps != null ? apps : (apps = sidecars.clone());
    };
  }
}

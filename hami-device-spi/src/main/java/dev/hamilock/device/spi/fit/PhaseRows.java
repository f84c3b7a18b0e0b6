package dev.hamilock.device.spi.fit;

import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ContainerRole;
import java.util.List;
import java.util.Objects;

/**
 * The device rows each container of one pod is placed on, so that every card's peak over the pod's
 * phases is what its fit checks: Kubernetes' {@code PodRequests} ({@code
 * k8s.io/component-helpers/resource} {@code helpers.go} v0.37, KEP-753) applied per card. Walk the
 * containers in allocation order (init containers in spec order, then regular ones), fit container
 * {@code ci} on {@link #forContainer(int) forContainer(ci)} and write its allocation into that same
 * array:
 *
 * <ul>
 *   <li>a {@link ContainerRole#SIDECAR} goes on the <em>sidecar rows</em>: the node's pre-pod usage
 *       plus every sidecar before it, cumulatively (it stays for the rest of the pod's life);
 *   <li>an {@link ContainerRole#INIT} container goes on a fresh copy of the sidecar rows as they
 *       are when it starts: init phase {@code i} = sidecars declared before {@code i} + init {@code
 *       i}; earlier init containers have ended;
 *   <li>{@link ContainerRole#APP} containers go cumulatively on one copy of the sidecar rows taken
 *       at the first of them: app phase = all sidecars + all app containers.
 * </ul>
 *
 * <p>Slots count the same way. Without sidecars this is HAMi's rule (spec §5.9, V75); with them it
 * differs from HAMi as {@link dev.hamilock.device.spi.usage.UsageReconstructor#collapse} does. Not
 * thread-safe; one instance per pod and node.
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

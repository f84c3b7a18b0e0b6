package dev.hamilock.device.spi.usage;

import dev.hamilock.device.spi.DeviceVendor;
import dev.hamilock.device.spi.DraDriver;
import dev.hamilock.device.spi.VendorRegistrationException;
import dev.hamilock.device.spi.VendorRegistry;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.DeviceUsage;
import dev.hamilock.device.spi.view.ResourceClaimView;
import dev.hamilock.device.spi.view.ResourceSliceView;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** DRA allocations as usage rows, by the rules of {@link UsageReconstructor#plusDra}. */
final class DraUsage {
  private static final BigDecimal MIB = BigDecimal.valueOf(1L << 20);

  private final Map<String, DraDriver> drivers = new HashMap<>();

  DraUsage(VendorRegistry registry) {
    Map<String, String> owner = new HashMap<>();
    for (DeviceVendor v : registry.vendors()) {
      for (DraDriver d : v.draDrivers()) {
        String prev = owner.putIfAbsent(d.driver(), v.commonWord());
        if (prev != null) {
          throw new VendorRegistrationException(
              "DRA driver " + d.driver() + " mapped by both " + prev + " and " + v.commonWord());
        }
        drivers.put(d.driver(), d);
      }
    }
  }

  /** A device of a pool's current generation and the node of its slice ("" if none). */
  private record Located(String node, ResourceSliceView.Device device) {}

  NodeUsage plus(NodeUsage u, DraObjects dra) {
    if (u.status() == NodeUsage.Status.UNREGISTERED
        || drivers.isEmpty()
        || dra.claims().isEmpty()) {
      return u;
    }
    Map<String, Long> generation = new HashMap<>();
    for (ResourceSliceView s : dra.slices()) {
      generation.merge(s.driver() + "/" + s.pool(), s.generation(), Math::max);
    }
    Map<String, Located> devices = new HashMap<>();
    for (ResourceSliceView s : dra.slices()) {
      String pool = s.driver() + "/" + s.pool();
      if (generation.get(pool) == s.generation()) {
        s.devices().forEach(d -> devices.put(pool + "/" + d.name(), new Located(s.nodeName(), d)));
      }
    }
    List<ContainerDevice> entries = new ArrayList<>();
    List<String> unresolved = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (ResourceClaimView c : dra.claims()) {
      for (ResourceClaimView.Result r : c.results()) {
        DraDriver m = drivers.get(r.driver());
        String id = r.driver() + "/" + r.pool() + "/" + r.device();
        Located at = devices.get(id);
        String node =
            at != null && !at.node().isEmpty()
                ? at.node()
                : c.allocationNode().isEmpty() ? r.pool() : c.allocationNode();
        if (m == null || r.adminAccess() || !node.equals(u.name())) {
          continue;
        }
        Map<String, String> attributes = at == null ? Map.of() : at.device().attributes();
        String parent = m.parentUuidAttribute().map(a -> m.value(attributes, a)).orElse(null);
        String uuid = parent != null ? parent : m.value(attributes, m.uuidAttribute());
        int p = uuid == null ? -1 : u.positionOf(uuid);
        boolean whole = r.shareId().isEmpty() || parent != null;
        if (p < 0) {
          unresolved.add(
              String.format(
                  "ResourceClaim %s device %s: %s",
                  c.key(),
                  id,
                  at == null
                      ? "no current ResourceSlice publishes it"
                      : uuid == null
                          ? "no " + m.uuidAttribute() + " attribute"
                          : "card " + uuid + " is not registered on the node"));
        } else if (seen.add(whole ? uuid : id + "/" + r.shareId().get())) {
          entries.add(entry(u.devices().get(p), m, whole ? Map.of() : r.consumedCapacity()));
        }
      }
    }
    NodeUsage out =
        u.plus(
            new PodUsage(
                "ResourceClaims", "", u.name(), entries, Optional.empty(), Optional.empty()));
    if (unresolved.isEmpty()) {
      return out;
    }
    String why = "DRA allocation of an unknown card: " + String.join("; ", unresolved);
    return NodeUsage.unknown(
        u.node(), out.devices(), u.unavailableReason().map(r -> r + "; " + why).orElse(why));
  }

  /**
   * The whole card when {@code consumed} has no memory, else the share it consumes (rounded up).
   */
  private static ContainerDevice entry(
      DeviceUsage card, DraDriver m, Map<String, BigDecimal> consumed) {
    BigDecimal bytes = m.memoryCapacity().map(n -> m.value(consumed, n)).orElse(null);
    if (bytes == null) {
      return new ContainerDevice(0, card.id(), card.vendor(), card.totalmem(), card.totalcore(), 1);
    }
    BigDecimal mib = bytes.divide(MIB, 0, RoundingMode.CEILING);
    BigDecimal cores = m.coresCapacity().map(n -> m.value(consumed, n)).orElse(null);
    if (cores == null) {
      cores =
          card.totalmem() <= 0
              ? BigDecimal.valueOf(card.totalcore())
              : mib.multiply(BigDecimal.valueOf(card.totalcore()))
                  .divide(BigDecimal.valueOf(card.totalmem()), 0, RoundingMode.CEILING);
    }
    return new ContainerDevice(0, card.id(), card.vendor(), sat(mib), sat(cores), 1);
  }

  private static int sat(BigDecimal v) {
    BigDecimal up = v.setScale(0, RoundingMode.CEILING);
    return up.compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) > 0
        ? Integer.MAX_VALUE
        : up.intValue();
  }
}

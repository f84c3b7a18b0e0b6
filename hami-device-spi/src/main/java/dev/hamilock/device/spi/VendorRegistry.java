package dev.hamilock.device.spi;

import static com.google.common.base.Preconditions.checkArgument;

import com.google.common.collect.Iterables;
import dev.hamilock.device.spi.model.ContainerDevice;
import dev.hamilock.device.spi.model.PodDevices;
import dev.hamilock.device.spi.view.ContainerView;
import dev.hamilock.device.spi.view.PodView;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The enabled device vendors and their configuration (HAMi's {@code DevicesToHandle} plus the
 * per-vendor sections of the device config file), discovered with {@link ServiceLoader} and/or
 * registered, in registration order. Immutable and thread-safe.
 */
public final class VendorRegistry {
  private static final Logger LOG = LoggerFactory.getLogger(VendorRegistry.class);

  private final List<DeviceVendor> vendors;
  private final Map<String, DeviceVendor> byWord;
  private final Map<String, VendorConfig> configs;

  private VendorRegistry(
      List<DeviceVendor> vendors,
      Map<String, DeviceVendor> byWord,
      Map<String, VendorConfig> configs) {
    this.vendors = List.copyOf(vendors);
    this.byWord = Map.copyOf(byWord);
    this.configs = Map.copyOf(configs);
  }

  /**
   * Every vendor {@link Builder#discover()} finds, with default configurations.
   *
   * @throws VendorRegistrationException on conflicts or provider load failures
   */
  public static VendorRegistry discover() {
    return builder().discover().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * {@return vendors in registration order, each behind the guard where a vendor enters the stack
   * (hami-device-spi README "A vendor's bug"): call these, not {@link #providers()}}
   */
  public List<DeviceVendor> vendors() {
    return vendors;
  }

  /**
   * {@return the vendors as discovered or registered, unguarded, in registration order: for their
   * class, module or own configuration, not to be called by a flow}
   */
  public List<DeviceVendor> providers() {
    return vendors.stream().map(v -> v instanceof CheckedVendor c ? c.unwrapped() : v).toList();
  }

  /** The vendor of a key (e.g. {@code NVIDIA}), if registered. */
  public Optional<DeviceVendor> vendor(String commonWord) {
    return Optional.ofNullable(byWord.get(commonWord));
  }

  /**
   * The effective configuration of a registered vendor.
   *
   * @throws IllegalArgumentException if no such vendor is registered
   */
  public VendorConfig config(String commonWord) {
    VendorConfig c = configs.get(commonWord);
    checkArgument(c != null, "no vendor registered with CommonWord %s", commonWord);
    return c;
  }

  /**
   * Whether kube-scheduler gave the pod the vendor's devices through DRA (its count resource is in
   * {@link PodView#draResources()}); their ResourceClaim counts them.
   *
   * @throws IllegalArgumentException if no such vendor is registered
   */
  public boolean viaDra(PodView pod, String commonWord) {
    return pod.draResources().contains(config(commonWord).resourceNames().count());
  }

  /**
   * Whether every vendor's devices the pod asks for (an unparsable request counts as asked) came
   * through DRA ({@link #viaDra}): such a pod is bound without a node lock.
   *
   * @return false when the pod asks for no device or for one not delegated to DRA
   */
  public boolean allViaDra(PodView pod) {
    boolean asks = false;
    for (DeviceVendor v : vendors) {
      boolean asked = false;
      for (ContainerView c : Iterables.concat(pod.initContainers(), pod.containers())) {
        try {
          asked |= v.parseRequest(c, config(v.commonWord())).filter(r -> r.nums() > 0).isPresent();
        } catch (InvalidResourceRequestException e) {
          asked = true;
        }
      }
      if (asked && !viaDra(pod, v.commonWord())) {
        return false;
      }
      asks |= asked;
    }
    return asks;
  }

  /**
   * The distinct {@link DeviceVendor#nodeLockKey()}s of the vendors that {@link
   * DeviceVendor#needsLock} outside DRA, sorted so that multi-vendor binds cannot deadlock.
   */
  public List<String> lockKeys(PodView pod) {
    TreeSet<String> keys = new TreeSet<>();
    for (DeviceVendor v : vendors) {
      Optional<String> k = v.nodeLockKey();
      if (k.isPresent()
          && v.needsLock(pod, configs.get(v.commonWord()))
          && !viaDra(pod, v.commonWord())) {
        keys.add(k.get());
      }
    }
    return List.copyOf(keys);
  }

  /**
   * Encodes a pod's allocation into every involved vendor's to-allocate and allocated annotations
   * (HAMi PatchAnnotations per vendor), in vendor order. Vendor-neutral keys such as {@link
   * HamiAnnotations#VGPU_NODE} are the caller's.
   *
   * @throws IllegalArgumentException if the allocation names an unregistered vendor
   */
  public Map<String, String> allocationAnnotations(PodDevices devices) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, List<List<ContainerDevice>>> e : devices.byVendor().entrySet()) {
      DeviceVendor v = byWord.get(e.getKey());
      checkArgument(v != null, "allocation names unregistered vendor %s", e.getKey());
      out.putAll(v.encodeAllocation(e.getValue()));
    }
    return Collections.unmodifiableMap(out);
  }

  private static String name(DeviceVendor v) {
    return (v instanceof CheckedVendor c ? c.unwrapped() : v).getClass().getName();
  }

  public static final class Builder {
    private final List<DeviceVendor> vendors = new ArrayList<>();
    private final Map<String, VendorConfig> configs = new HashMap<>();

    private Builder() {}

    /**
     * Discovers vendors with {@link ServiceLoader}: in this module's layer on the module path, else
     * through the thread context class loader.
     *
     * @throws VendorRegistrationException if a provider fails to load
     */
    public Builder discover() {
      Module m = DeviceVendor.class.getModule();
      if (m.isNamed() && m.getLayer() != null) {
        return addAll(ServiceLoader.load(m.getLayer(), DeviceVendor.class));
      }
      ClassLoader cl = Thread.currentThread().getContextClassLoader();
      return addAll(
          ServiceLoader.load(
              DeviceVendor.class, cl != null ? cl : DeviceVendor.class.getClassLoader()));
    }

    private Builder addAll(ServiceLoader<DeviceVendor> loader) {
      try {
        for (DeviceVendor v : loader) {
          if (vendors.stream().anyMatch(x -> x.getClass() == v.getClass())) {
            LOG.debug("vendor provider {} already registered; skipping", v.getClass().getName());
            continue;
          }
          LOG.debug("discovered device vendor {} ({})", v.commonWord(), v.getClass().getName());
          vendors.add(v);
        }
      } catch (ServiceConfigurationError e) {
        throw new VendorRegistrationException("cannot load device vendor: " + e.getMessage(), e);
      }
      return this;
    }

    /** Registers a vendor explicitly (embedders, tests). */
    public Builder register(DeviceVendor vendor) {
      vendors.add(Objects.requireNonNull(vendor, "vendor"));
      return this;
    }

    /** Overrides a vendor's configuration (otherwise {@link DeviceVendor#defaultConfig()}). */
    public Builder configure(String commonWord, VendorConfig config) {
      configs.put(
          Objects.requireNonNull(commonWord, "commonWord"),
          Objects.requireNonNull(config, "config"));
      return this;
    }

    /**
     * @throws VendorRegistrationException naming both provider classes on a duplicate CommonWord or
     *     an overlapping resource name, or when a configuration names no registered vendor
     */
    public VendorRegistry build() {
      Map<String, DeviceVendor> words = new HashMap<>();
      Map<String, DeviceVendor> resources = new HashMap<>();
      Map<String, VendorConfig> effective = new HashMap<>();
      List<DeviceVendor> checked = new ArrayList<>();
      for (DeviceVendor raw : vendors) {
        String w;
        try {
          w = raw.commonWord();
        } catch (RuntimeException e) {
          throw new VendorRegistrationException(
              "vendor " + raw.getClass().getName() + ": commonWord() failed: " + e, e);
        }
        if (w == null || w.isBlank()) {
          throw new VendorRegistrationException(
              "vendor " + raw.getClass().getName() + " has a blank CommonWord");
        }
        DeviceVendor v = CheckedVendor.of(raw, w);
        checked.add(v);
        DeviceVendor prev = words.putIfAbsent(w, v);
        if (prev != null) {
          throw new VendorRegistrationException(
              "duplicate device vendor CommonWord %s: %s and %s".formatted(w, name(prev), name(v)));
        }
        VendorConfig c = configs.getOrDefault(w, v.defaultConfig());
        effective.put(w, c);
        for (String r : c.resourceNames().all()) {
          DeviceVendor other = resources.putIfAbsent(r, v);
          if (other != null && other != v) {
            throw new VendorRegistrationException(
                "resource name %s claimed by both %s (%s) and %s (%s)"
                    .formatted(r, name(other), other.commonWord(), name(v), w));
          }
        }
      }
      for (String w : configs.keySet()) {
        if (!words.containsKey(w)) {
          throw new VendorRegistrationException("configuration given for unregistered vendor " + w);
        }
      }
      return new VendorRegistry(checked, words, effective);
    }
  }
}

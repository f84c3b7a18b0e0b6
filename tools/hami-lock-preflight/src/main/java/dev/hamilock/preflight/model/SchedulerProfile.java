package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.YamlPath;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One {@code profiles[i]} entry of a {@code KubeSchedulerConfiguration} (kube-scheduler's {@code
 * pkg/scheduler/apis/config/v1} types), reduced to what the checks need.
 *
 * @param schedulerName the profile's {@code schedulerName}; {@code default-scheduler} when absent
 * @param plugins per extension point ({@code multiPoint}, {@code queueSort}, {@code preFilter},
 *     ...), the plugin names listed under {@code enabled} and {@code disabled}
 * @param document the (possibly embedded) configuration document
 * @param path path of the profile inside {@code document}, e.g. {@code profiles[0]}; empty for the
 *     implicit profile of a configuration without profiles
 */
public record SchedulerProfile(
    String schedulerName, Map<String, PluginSet> plugins, ManifestDocument document, String path) {

  /** kube-scheduler's scheduler name when a profile does not set one. */
  public static final String DEFAULT_SCHEDULER_NAME = "default-scheduler";

  /** Copies {@code plugins}; validates non-null components. */
  public SchedulerProfile {
    Objects.requireNonNull(schedulerName, "schedulerName");
    plugins = Map.copyOf(plugins);
    Objects.requireNonNull(document, "document");
    Objects.requireNonNull(path, "path");
  }

  /**
   * The {@code enabled}/{@code disabled} plugin names of one extension point.
   *
   * @param enabled names under {@code enabled}, in order
   * @param disabled names under {@code disabled}, in order ({@code *} disables all defaults)
   */
  public record PluginSet(List<String> enabled, List<String> disabled) {
    /** Copies the lists. */
    public PluginSet {
      enabled = List.copyOf(enabled);
      disabled = List.copyOf(disabled);
    }
  }

  /**
   * @param plugin a plugin name, e.g. {@code Coscheduling}
   * @return whether the plugin is listed under {@code enabled} of {@code multiPoint} or of any
   *     extension point
   */
  public boolean enables(String plugin) {
    return plugins.values().stream().anyMatch(s -> s.enabled().contains(plugin));
  }

  /**
   * @param point an extension point, e.g. {@code queueSort}
   * @param plugin a plugin name
   * @return whether the plugin is listed under that point's {@code enabled}
   */
  public boolean enablesAt(String point, String plugin) {
    PluginSet s = plugins.get(point);
    return s != null && s.enabled().contains(plugin);
  }

  /**
   * @param point an extension point
   * @param plugin a plugin name
   * @return whether that point's {@code disabled} lists the plugin or {@code *}
   */
  public boolean disablesAt(String point, String plugin) {
    PluginSet s = plugins.get(point);
    return s != null && (s.disabled().contains(plugin) || s.disabled().contains("*"));
  }

  /**
   * @param relative path below the profile, e.g. {@code plugins.queueSort}
   * @return the location of that path (or of the profile when {@code relative} is empty)
   */
  public Location location(String relative) {
    return document.location(YamlPath.join(path, relative));
  }
}

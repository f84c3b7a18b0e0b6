package dev.hamilock.preflight.model;

import dev.hamilock.preflight.manifest.Location;
import dev.hamilock.preflight.manifest.ManifestDocument;
import dev.hamilock.preflight.manifest.YamlPath;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One {@code extenders[i]} entry of a {@code KubeSchedulerConfiguration}.
 *
 * @param urlPrefix        {@code urlPrefix}, when present
 * @param bindVerb         {@code bindVerb}, when present and non-blank (HAMi's chart writes {@code bind})
 * @param httpTimeout      {@code httpTimeout} as written (Go duration text, e.g. {@code 30s}),
 *                         when present; kube-scheduler uses 5 s when it is absent or zero
 * @param managedResources names under {@code managedResources[*].name}
 * @param document         the configuration document
 * @param path             path of the entry, e.g. {@code extenders[0]}
 */
public record SchedulerExtender(Optional<String> urlPrefix, Optional<String> bindVerb,
        Optional<String> httpTimeout, List<String> managedResources, ManifestDocument document, String path) {

    /** Copies the list; validates non-null components. */
    public SchedulerExtender {
        Objects.requireNonNull(urlPrefix, "urlPrefix");
        Objects.requireNonNull(bindVerb, "bindVerb");
        Objects.requireNonNull(httpTimeout, "httpTimeout");
        managedResources = List.copyOf(managedResources);
        Objects.requireNonNull(document, "document");
        Objects.requireNonNull(path, "path");
    }

    /**
     * @param relative path below the entry, e.g. {@code httpTimeout}
     * @return its location
     */
    public Location location(String relative) {
        return document.location(YamlPath.join(path, relative));
    }
}

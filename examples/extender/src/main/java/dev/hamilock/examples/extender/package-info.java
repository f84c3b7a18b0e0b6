/**
 * A runnable HAMi-compatible kube-scheduler extender (issue 7, examples item 1): HAMi's flags in Go
 * duration syntax ({@link dev.hamilock.examples.extender.ExtenderOptions}), the refuse-to-start
 * rule, and hami-lock-extender's {@code ExtenderServer}/{@code HamiExtender} wired on
 * hami-lock-k8s's {@code KubernetesHamiStack} ({@link
 * dev.hamilock.examples.extender.RunningExtender}). Entry point: {@link
 * dev.hamilock.examples.extender.ExtenderMain}.
 */
package dev.hamilock.examples.extender;

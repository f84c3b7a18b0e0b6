/**
 * Reusable, test-framework-neutral support for the gang-bind safety property: the {@link
 * dev.hamilock.bind.testing.Scenario} model and a seeded {@link
 * dev.hamilock.bind.testing.ScenarioGenerator}, the {@link
 * dev.hamilock.bind.testing.ScenarioRunner} (stale-snapshot scheduler replicas binding
 * concurrently), the {@link dev.hamilock.bind.testing.SimulatedDevicePlugin}, the {@link
 * dev.hamilock.bind.testing.PhysicalLedger} and the {@link
 * dev.hamilock.bind.testing.BindInvariants} checker. Backends plug in through {@link
 * dev.hamilock.bind.testing.ScenarioBackend}. The QuickTheories generators for the same scenarios
 * are {@code dev.hamilock.bind.scenarios.ScenarioGens}, in this module too. Test support
 * (hami-lock-bind-testkit, test scope), not for production use: {@link
 * dev.hamilock.bind.testing.NoOpNodeLock} is deliberately broken.
 */
package dev.hamilock.bind.testing;

package dev.hamilock.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hamilock.core.RetryPolicy;
import dev.hamilock.k8s.watch.FairLockReleaseSignal;
import dev.hamilock.testkit.ApiServerEmulator;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BuilderAndSignalTest {

    static ApiServerEmulator k8s;

    @BeforeAll
    static void start() {
        k8s = ApiServerEmulator.start();
    }

    @AfterAll
    static void stop() {
        k8s.close();
    }

    @Test
    void lockTimeoutPrecedenceIsExplicitThenEnvironmentThenFiveMinutes() {
        try (KubernetesLockStack l = KubernetesLockStack.builder(k8s.apiClient()).watch(false)
                .environment(Map.of("HAMI_NODELOCK_EXPIRE", "10m")).lockTimeout(Duration.ofMinutes(2)).build()) {
            assertThat(l.nodeLock().lockTimeout()).isEqualTo(Duration.ofMinutes(2));
        }
        try (KubernetesLockStack l = KubernetesLockStack.builder(k8s.apiClient()).watch(false)
                .environment(Map.of("HAMI_NODELOCK_EXPIRE", "10m")).build()) {
            assertThat(l.nodeLock().lockTimeout()).isEqualTo(Duration.ofMinutes(10));
            assertThat(l.releaseSignal()).isEmpty();
            assertThat(l.watch()).isEmpty();
        }
        try (KubernetesLockStack l = KubernetesLockStack.builder(k8s.apiClient()).watch(false).environment(Map.of()).build()) {
            assertThat(l.nodeLock().lockTimeout()).isEqualTo(Duration.ofMinutes(5));
            assertThat(l.nodeLock().key()).isEqualTo("hami.io/mutex.lock");
            assertThat(l.acquirer().policy()).isEqualTo(RetryPolicy.defaults());
        }
    }

    @Test
    void invalidSettingsAreRejectedNamingThem() {
        assertThatThrownBy(() -> KubernetesLockStack.builder(null)).hasMessageContaining("apiClient");
        assertThatThrownBy(() -> KubernetesLockStack.builder(k8s.apiClient()).watch(false)
                .environment(Map.of("HAMI_NODELOCK_EXPIRE", "notaduration")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("notaduration");
        assertThatThrownBy(() -> KubernetesLockStack.builder(k8s.apiClient()).key(" ").build())
                .hasMessageContaining("key");
        assertThatThrownBy(() -> KubernetesLockStack.builder(k8s.apiClient()).requestTimeout(Duration.ofSeconds(30)).build())
                .hasMessageContaining("requestTimeout").hasMessageContaining("extender");
        assertThatThrownBy(() -> RetryPolicy.builder().retryTimeout(Duration.ofSeconds(30)).build())
                .hasMessageContaining("30s");
        assertThatThrownBy(() -> KubernetesLockStack.builder(k8s.apiClient()).retryPolicy(null).build())
                .hasMessageContaining("retryPolicy");
        assertThatThrownBy(() -> KubernetesLockStack.builder(k8s.apiClient()).maxAttempts(0).watch(false).build())
                .hasMessageContaining("maxAttempts");
    }

    @Test
    void aReleaseBeforeTheWaitIsNeverLost() throws Exception {
        FairLockReleaseSignal s = new FairLockReleaseSignal();
        long v = s.version("n");
        s.released("n");
        assertThat(s.awaitChange("n", v, Duration.ofSeconds(5))).isTrue();
        assertThat(s.awaitChange("n", s.version("n"), Duration.ZERO)).isFalse();
    }

    @Test
    void releaseWakesTheOldestWaiterOnlyAndOthersKeepTheirPlace() throws Exception {
        FairLockReleaseSignal s = new FairLockReleaseSignal();
        long v = s.version("n");
        CompletableFuture<Long> first = CompletableFuture.supplyAsync(() -> timedWait(s, v));
        while (s.waiting("n") < 1) {
            Thread.sleep(1);
        }
        CompletableFuture<Long> second = CompletableFuture.supplyAsync(() -> timedWait(s, v));
        while (s.waiting("n") < 2) {
            Thread.sleep(1);
        }
        assertThat(s.released("n")).isTrue();
        assertThat(s.waiting("n")).as("exactly one waiter woken").isEqualTo(1);
        assertThat(first.get(5, TimeUnit.SECONDS)).isLessThan(TimeUnit.SECONDS.toNanos(20));
        assertThat(s.waiting("n")).as("the second keeps waiting").isEqualTo(1);
        assertThat(second).isNotDone();
        s.wakeAll("n");
        assertThat(second.get(5, TimeUnit.SECONDS)).isLessThan(TimeUnit.SECONDS.toNanos(20));
    }

    @Test
    void aReleaseGivenToAnOlderWaiterDoesNotWakeAYoungerOneWhenItWaitsAgain() throws Exception {
        FairLockReleaseSignal s = new FairLockReleaseSignal();
        long v = s.version("n");
        CompletableFuture<Long> older = CompletableFuture.supplyAsync(() -> timedWait(s, v));
        while (s.waiting("n") < 1) {
            Thread.sleep(1);
        }
        java.util.concurrent.atomic.AtomicReference<Thread> youngerThread = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.BlockingQueue<Boolean> youngerAnswers = new java.util.concurrent.LinkedBlockingQueue<>();
        Thread younger = new Thread(() -> {
            youngerThread.set(Thread.currentThread());
            try {
                s.awaitChange("n", v, Duration.ofSeconds(20));
                youngerAnswers.add(true);
            } catch (InterruptedException e) {
                youngerAnswers.add(false); // the first slice ended without a wake-up of its own
            }
            try {
                // the next slice, same version as before the attempt: the release was not ours
                youngerAnswers.add(s.awaitChange("n", v, Duration.ZERO));
                while (s.waiting("n") > 0 || !releasedAgain) {
                    Thread.onSpinWait();
                }
                // a release after our last wait ended is ours to see at once
                youngerAnswers.add(s.awaitChange("n", v, Duration.ZERO));
            } catch (InterruptedException e) {
                youngerAnswers.add(false);
            }
        });
        younger.start();
        while (s.waiting("n") < 2) {
            Thread.sleep(1);
        }
        assertThat(s.released("n")).isTrue(); // goes to the older waiter
        assertThat(older.get(5, TimeUnit.SECONDS)).isLessThan(TimeUnit.SECONDS.toNanos(20));
        younger.interrupt();
        assertThat(youngerAnswers.poll(5, TimeUnit.SECONDS)).isFalse();
        assertThat(youngerAnswers.poll(5, TimeUnit.SECONDS)).as("no herd on re-entry").isFalse();
        assertThat(s.released("n")).isFalse(); // nobody waiting now
        releasedAgain = true;
        assertThat(youngerAnswers.poll(5, TimeUnit.SECONDS)).as("no lost wake-up").isTrue();
        younger.join(5_000);
    }

    private volatile boolean releasedAgain;

    @Test
    void ticketsEndWithTheAcquireCallOrWhenStale() throws Exception {
        FairLockReleaseSignal s = new FairLockReleaseSignal(Duration.ofMillis(50));
        s.awaitChange("n", s.version("n"), Duration.ofMillis(1));
        assertThat(s.queueLength("n")).isEqualTo(1);
        s.finished("n");
        assertThat(s.queueLength("n")).isZero();
        s.awaitChange("n", s.version("n"), Duration.ofMillis(1));
        Thread.sleep(80);
        assertThat(s.queueLength("n")).isZero();
        assertThatThrownBy(() -> new FairLockReleaseSignal(Duration.ZERO)).hasMessageContaining("staleAfter");
    }

    private static long timedWait(FairLockReleaseSignal s, long v) {
        long t0 = System.nanoTime();
        try {
            s.awaitChange("n", v, Duration.ofSeconds(20));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return System.nanoTime() - t0;
    }
}

package dev.hamilock.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LockChangeNotifierTest {

    @Test
    void aChangeBeforeTheWaitIsNotLost() throws Exception {
        LockChangeNotifier n = new LockChangeNotifier();
        long v = n.version("node-a");
        n.lockChanged("node-a");
        assertThat(n.awaitChange("node-a", v, Duration.ofDays(1))).isTrue();
    }

    @Test
    void otherNodesDoNotWake() throws Exception {
        LockChangeNotifier n = new LockChangeNotifier();
        long v = n.version("node-a");
        n.lockChanged("node-b");
        assertThat(n.awaitChange("node-a", v, Duration.ZERO)).isFalse();
        assertThat(n.awaitChange("node-a", v, Duration.ofMillis(1))).isFalse();
    }

    @Test
    void wakesAWaitingThread() throws Exception {
        LockChangeNotifier n = new LockChangeNotifier();
        long v = n.version("node-a");
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Boolean> woke = CompletableFuture.supplyAsync(() -> {
            waiting.countDown();
            try {
                return n.awaitChange("node-a", v, Duration.ofDays(1));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        waiting.await();
        n.lockChanged("node-a");
        assertThat(woke.get(1, TimeUnit.MINUTES)).isTrue();
    }

    @Test
    void versionsNeverRepeatAfterForget() {
        LockChangeNotifier n = new LockChangeNotifier();
        n.lockChanged("node-a");
        long before = n.version("node-a");
        n.forget("node-a");
        assertThat(n.version("node-a")).isNotEqualTo(before);
    }
}

package dev.hamilock.reference;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spec §8 V24 generalised: N concurrent {@code LockNode} calls on one free node, spread over one or
 * more simulated HAMi processes (each with its own in-process mutex map and client), produce
 * exactly one owner; every loser gets contention; the node holds the winner's value. Without the
 * in-process mutex (one process) or the resourceVersion precondition (several), two would win.
 */
class HamiNodeLockConcurrencyProperties {

  private static EmulatedCluster cluster;
  private static int round;

  @BeforeAll
  static void start() throws Exception {
    cluster = EmulatedCluster.start();
    cluster.createNamespace("ns");
    for (int i = 0; i < 4; i++) {
      cluster.createPod("ns", "pod-" + i); // live owners: a loser must not see a dangling lock
    }
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  /**
   * Every combination of 2–4 lockers and 1–3 processes, twice (18 races; the random property took
   * 12 tries of these 9 combinations).
   */
  @Test
  void exactlyOneConcurrentLockerWins() throws Exception {
    for (int rerun = 0; rerun < 2; rerun++) {
      for (int lockers = 2; lockers <= 4; lockers++) {
        for (int processes = 1; processes <= 3; processes++) {
          try {
            exactlyOneWins(lockers, processes);
          } catch (AssertionError e) {
            throw new AssertionError(
                lockers + " lockers, " + processes + " processes: " + e.getMessage(), e);
          }
        }
      }
    }
  }

  private static void exactlyOneWins(int lockers, int processes) throws Exception {
    String node = "race-" + (round++);
    cluster.createNode(node, Map.of());
    List<HamiNodeLock> locks = new ArrayList<>();
    for (int p = 0; p < processes; p++) {
      locks.add(HamiNodeLock.builder(cluster.newClient()).sleeper(d -> Thread.sleep(1)).build());
    }
    ExecutorService pool = Executors.newFixedThreadPool(lockers);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Exception>> outcomes = new ArrayList<>();
      for (int i = 0; i < lockers; i++) {
        HamiNodeLock lock = locks.get(i % processes);
        String pod = "pod-" + i;
        outcomes.add(
            pool.submit(
                () -> {
                  go.await();
                  try {
                    lock.lockNode(node, "ns", pod);
                    return null;
                  } catch (Exception e) {
                    return e;
                  }
                }));
      }
      go.countDown();
      List<Integer> winners = new ArrayList<>();
      for (int i = 0; i < lockers; i++) {
        Exception e = outcomes.get(i).get(30, TimeUnit.SECONDS);
        if (e == null) {
          winners.add(i);
        } else {
          assertThat(HamiLockContentionException.isContention(e)).as("loser error %s", e).isTrue();
        }
      }
      assertThat(winners).hasSize(1);
      assertThat(cluster.nodeAnnotation(node, HamiLockValue.NODE_LOCK_KEY).orElseThrow())
          .endsWith(",ns,pod-" + winners.get(0));
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }
}

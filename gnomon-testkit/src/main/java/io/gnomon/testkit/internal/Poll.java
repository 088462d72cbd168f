package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Waiting for a condition with a deadline: the only place the testkit pauses. */
public final class Poll {

  private static final Duration INTERVAL = Duration.ofMillis(25);

  private Poll() {}

  /**
   * Evaluates {@code condition} until it holds or {@code timeout} passes.
   *
   * @param timeout how long to keep trying
   * @param condition the condition; evaluated at least once
   * @return whether the condition held before the deadline
   * @throws PgClusterException if the thread is interrupted (the interrupt flag is restored)
   */
  public static boolean until(Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      pause(INTERVAL);
    }
  }

  /**
   * Sleeps between two attempts of a polling loop.
   *
   * @param interval how long
   */
  static void pause(Duration interval) {
    try {
      TimeUnit.NANOSECONDS.sleep(interval.toNanos());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PgClusterException("Interrupted while waiting for PostgreSQL", e);
    }
  }

  /**
   * Waits for a process to exit.
   *
   * @param process the process
   * @param timeout how long at most
   * @return whether it exited in time
   */
  static boolean exited(Process process, Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PgClusterException("Interrupted while waiting for a PostgreSQL process", e);
    }
  }
}

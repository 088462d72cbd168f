package io.gnomon.testkit.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JVM shutdown hook that runs cleanup actions (stopping clusters, deleting directories,
 * dropping databases on existing servers) in reverse order of registration, so that standbys go
 * before their primaries and databases before their servers.
 */
public final class ShutdownHooks {

  private static final Logger LOG = LoggerFactory.getLogger(ShutdownHooks.class);
  private static final Map<Long, Action> ACTIONS = new LinkedHashMap<>();
  private static long next;
  private static boolean installed;
  private static boolean running;

  private record Action(String description, Runnable body) {}

  private ShutdownHooks() {}

  /**
   * Registers an action to run at JVM exit.
   *
   * @param description what the action cleans up, for the log
   * @param action the action; exceptions are logged and do not stop other actions
   * @return a callback that removes the action (call it after cleaning up normally)
   */
  public static synchronized Runnable register(String description, Runnable action) {
    if (!installed) {
      Runtime.getRuntime()
          .addShutdownHook(new Thread(ShutdownHooks::runAll, "gnomon-testkit-cleanup"));
      installed = true;
    }
    long id = next++;
    ACTIONS.put(id, new Action(description, action));
    return () -> unregister(id);
  }

  private static synchronized void unregister(long id) {
    if (!running) {
      ACTIONS.remove(id);
    }
  }

  private static void runAll() {
    List<Action> actions;
    synchronized (ShutdownHooks.class) {
      running = true;
      actions = new ArrayList<>(ACTIONS.values());
      ACTIONS.clear();
    }
    Collections.reverse(actions);
    for (Action a : actions) {
      try {
        a.body().run();
      } catch (RuntimeException | Error e) {
        LOG.warn("Cleanup at JVM exit failed: {}: {}", a.description(), e.toString());
      }
    }
  }
}

package io.gnomon.testkit.internal;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.ConnectionInitializer;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PgClusterException;
import io.gnomon.testkit.PgSource;
import io.gnomon.testkit.PostgresUnavailableException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The JVM-wide shared server behind {@code TestDatabases}: started lazily once, with {@link
 * ClusterOptions#forTests()}, removed by the shutdown hook. Template databases are built once per
 * JVM; per-class databases are cloned from them.
 *
 * <p>On an existing server (shared by other JVMs and runs) every database name gets a per-JVM
 * suffix, and databases still present at JVM exit are dropped by the shutdown hook.
 */
public final class SharedServer {

  private static final Object LOCK = new Object();
  private static final Map<String, Template> TEMPLATES = new HashMap<>();
  private static final Set<String> CREATED = Collections.synchronizedSet(new LinkedHashSet<>());
  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static final String JVM_TAG = tag();
  private static final int MAX_PREFIX = 40;

  private static PgCluster server;
  private static RuntimeException failure;

  private record Template(String actualName, RuntimeException failure) {}

  private SharedServer() {}

  /**
   * Returns the shared server, starting it on first use.
   *
   * @return the running server
   * @throws PostgresUnavailableException if no PostgreSQL can be had (remembered for the JVM)
   */
  public static PgCluster get() {
    synchronized (LOCK) {
      if (server != null) {
        return server;
      }
      if (failure != null) {
        String message =
            "The shared test server could not be obtained earlier in this JVM: "
                + failure.getMessage();
        throw failure instanceof PostgresUnavailableException
            ? new PostgresUnavailableException(message)
            : new PgClusterException(message, failure);
      }
      try {
        server = Provisioner.obtain(ClusterOptions.forTests(), false);
      } catch (RuntimeException e) {
        failure = e;
        throw e;
      }
      if (isExisting()) {
        ShutdownHooks.register("test databases on " + server, SharedServer::dropLeftovers);
      }
      return server;
    }
  }

  /**
   * Builds a template database once per JVM and returns its actual name.
   *
   * @param name the template's logical name
   * @param initializer fills it; runs at most once per JVM and name
   * @return the database name to clone from
   */
  public static String template(String name, ConnectionInitializer initializer) {
    Sql.checkDatabaseName("template", name);
    Objects.requireNonNull(initializer, "initializer");
    synchronized (TEMPLATES) {
      Template t = TEMPLATES.get(name);
      if (t != null) {
        if (t.failure() != null) {
          throw new PgClusterException(
              "Template database '"
                  + name
                  + "' failed to initialise earlier in this JVM: "
                  + t.failure().getMessage(),
              t.failure());
        }
        return t.actualName();
      }
      PgCluster pg = get();
      String actual = isExisting() ? uniqueName(name) : name;
      try {
        build(pg, actual, initializer);
        TEMPLATES.put(name, new Template(actual, null));
        return actual;
      } catch (RuntimeException e) {
        TEMPLATES.put(name, new Template(actual, e));
        throw e;
      }
    }
  }

  /**
   * Creates a fresh database, cloned from a template registered with {@link #template} (by its
   * logical name) or from any existing database.
   *
   * @param prefix the start of the name, sanitised (lower case, {@code [a-z0-9_]})
   * @param template the template's logical name, an existing database, or null for template1
   * @return the new database's name
   */
  public static String createFresh(String prefix, String template) {
    PgCluster pg = get();
    String source = null;
    if (template != null) {
      synchronized (TEMPLATES) {
        Template t = TEMPLATES.get(template);
        if (t != null && t.failure() != null) {
          throw new PgClusterException(
              "Cannot clone template database '"
                  + template
                  + "': it failed to initialise earlier in this JVM: "
                  + t.failure().getMessage(),
              t.failure());
        }
        source = t != null ? t.actualName() : template;
      }
    }
    String name = uniqueName(prefix);
    if (source == null) {
      pg.createDatabase(name);
    } else {
      pg.createDatabase(name, source);
    }
    track(name);
    return name;
  }

  /**
   * Drops a database made by {@link #createFresh}.
   *
   * @param name the database
   */
  public static void drop(String name) {
    get().dropDatabase(name);
    CREATED.remove(name);
  }

  private static void build(PgCluster pg, String name, ConnectionInitializer initializer) {
    pg.dropDatabase(name);
    pg.createDatabase(name);
    track(name);
    try (Connection c = pg.connect(name)) {
      initializer.initialize(c);
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (Exception e) {
      try {
        pg.dropDatabase(name);
        CREATED.remove(name);
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new PgClusterException(
          "Initialising template database '" + name + "' on " + pg + " failed: " + e, e);
    }
    // Cloning needs a template nobody is connected to: end stray sessions, refuse new ones.
    ((JdbcServer) pg)
        .admin(
            "seal template database '" + name + "'",
            st -> {
              try (PreparedStatement ps =
                  st.getConnection()
                      .prepareStatement(
                          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                              + " WHERE datname = ? AND pid <> pg_backend_pid()")) {
                ps.setString(1, name);
                ps.execute();
              }
              st.execute(
                  "ALTER DATABASE "
                      + Sql.quoteIdent(name)
                      + " WITH IS_TEMPLATE true ALLOW_CONNECTIONS false");
            });
  }

  private static boolean isExisting() {
    return server != null && server.source() == PgSource.EXISTING_SERVER;
  }

  private static void track(String name) {
    if (isExisting()) {
      CREATED.add(name);
    }
  }

  private static void dropLeftovers() {
    List<String> names;
    synchronized (CREATED) {
      names = new ArrayList<>(CREATED);
    }
    Collections.reverse(names);
    for (String n : names) {
      server.dropDatabase(n);
    }
  }

  /** Makes a database name from a prefix: sanitised, counted, suffixed on shared servers. */
  static String uniqueName(String prefix) {
    String p = prefix == null ? "" : prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    if (p.isEmpty() || !Character.isLetter(p.charAt(0))) {
      p = "db_" + p;
    }
    if (p.length() > MAX_PREFIX) {
      p = p.substring(0, MAX_PREFIX);
    }
    String suffix = "_" + COUNTER.incrementAndGet() + (isExisting() ? "_" + JVM_TAG : "");
    return p + suffix;
  }

  private static String tag() {
    SecureRandom r = new SecureRandom();
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 6; i++) {
      sb.append(Character.forDigit(r.nextInt(36), 36));
    }
    return sb.toString();
  }
}

package io.gnomon.cli;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PgClusterException;
import io.gnomon.testkit.PgSource;
import io.gnomon.testkit.PostgresProvider;
import io.gnomon.testkit.PostgresUnavailableException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code ./gnomon demo}: runs {@link Demo} on a database of its own, in a throwaway PostgreSQL cluster it starts
 * through the testkit (or on the server named by {@code GNOMON_JDBC_URL}, in a database it creates and drops).
 */
final class DemoCommand implements Command {

  @Override
  public String name() {
    return "demo";
  }

  @Override
  public String summary() {
    return "Walk through Gnomon on a throwaway PostgreSQL: track a table, change it, read it as of the past, branch it";
  }

  @Override
  public String usage() {
    return """
        usage: %1$s demo

        Starts a throwaway PostgreSQL cluster from the server binaries on this machine
        (/usr/lib/postgresql/*/bin; as root they run as the postgres OS user), installs Gnomon into a new
        database, and walks through it step by step: track a table, capture a coordinate, change rows,
        read the table as of the coordinate and as of a time (SQL, JDBC and jOOQ), run the ticker, take a
        checkpoint, follow the changes with a change-feed consumer (events as JSON), branch the table (a
        branch and a branch of it, written with ordinary SQL, read at each level, and diffed), and see
        Gnomon's errors with their SQLSTATEs. Every statement is printed with what it returned. The demo checks its own
        results and the cluster is removed when it ends.

        With GNOMON_JDBC_URL set (jdbc:postgresql://host:port/db?user=..&password=.., a superuser), it uses
        that server instead, in a database gnomon_demo_<random> that it creates and drops.

        Exit status: 0 when every step returned what it should, 1 otherwise.
        """
        .formatted(Main.PROGRAM);
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
    Options.parse(args, Set.of(), Set.of());
    long started = System.nanoTime();
    out.println("Gnomon demo: versioned PostgreSQL tables, read as of any past point.");
    PgCluster pg;
    try {
      pg = PostgresProvider.obtain(ClusterOptions.builder().fsync(false).build());
    } catch (PostgresUnavailableException e) {
      err.println(Main.PROGRAM + " demo: no PostgreSQL to run on.");
      err.println(e.getMessage());
      err.println("Install the server binaries (apt-get install postgresql-15) or point GNOMON_JDBC_URL at a server.");
      return FAILED;
    } catch (PgClusterException e) {
      err.println(Main.PROGRAM + " demo: could not start or reach PostgreSQL: " + e.getMessage());
      return FAILED;
    }
    try (pg) {
      boolean existing = pg.source() == PgSource.EXISTING_SERVER;
      String database = existing
          ? "gnomon_demo_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 32)
          : "gnomon_demo";
      pg.createDatabase(database);
      Transcript transcript = new Transcript(out, database);
      try {
        out.println(describe(pg, database));
        new Demo(pg.dataSource(database), transcript).run();
      } catch (SQLException | RuntimeException e) {
        out.flush();
        err.println();
        err.println(Main.PROGRAM + " demo: failed at " + transcript.currentStep() + ":");
        err.println("  " + message(e).replace("\n", "\n  "));
        return FAILED;
      } finally {
        if (existing) {
          pg.dropDatabase(database);
        }
      }
      out.println();
      out.printf(Locale.ROOT, "Demo finished in %.1f s; every step returned what it should.%n",
          (System.nanoTime() - started) / 1e9);
      out.println("Next: README.md has the same walk-through in psql and Java; docs/ has the reference.");
      return OK;
    } catch (PgClusterException e) {
      err.println(Main.PROGRAM + " demo: PostgreSQL failed: " + e.getMessage());
      return FAILED;
    }
  }

  private static String describe(PgCluster pg, String database) throws SQLException {
    String version;
    try (Connection c = pg.connect(database);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("show server_version")) {
      rs.next();
      version = rs.getString(1);
    }
    String where = switch (pg.source()) {
      case EXISTING_SERVER -> "the server named by GNOMON_JDBC_URL, in a new database " + database
          + " (dropped at the end)";
      case LOCAL_BINARIES -> "a throwaway cluster started from this machine's PostgreSQL binaries, on port "
          + pg.port() + " (removed at the end)";
      case EMBEDDED_BINARIES -> "a throwaway cluster from embedded PostgreSQL binaries, on port " + pg.port()
          + " (removed at the end)";
      case TESTCONTAINERS -> "a throwaway PostgreSQL container (removed at the end)";
    };
    return "Running on PostgreSQL " + version + ": " + where + ".";
  }

  private static String message(Throwable e) {
    if (e instanceof SQLException s) {
      return String.join("\n", Transcript.psqlError(s)) + "\n[SQLSTATE " + s.getSQLState() + "]";
    }
    return e.getMessage() == null ? e.toString() : e.getMessage();
  }
}

package io.gnomon.bench;

import io.gnomon.Coordinate;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What a coordinate costs on the client: parsing and printing its text form, and capturing one from
 * the database ({@code select gnomon.coordinate()} through JDBC, then parsing it) against its own
 * baseline, a {@code select 1} round trip on the same connection. The database benchmarks share a
 * throwaway cluster started through the testkit with the benchmark settings; the pure-Java ones
 * start none.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CoordinateBenchmark {

  /** A coordinate with a few in-progress transactions, as a busy server would hand out. */
  @State(Scope.Thread)
  public static class Text {
    String text = "v1:74200123:74200131:74200124,74200126,74200129";
    Coordinate coordinate = Coordinate.parse(text);
  }

  /** A database with the Gnomon catalog and two prepared statements. */
  @State(Scope.Benchmark)
  public static class Database {
    PgCluster pg;
    Connection connection;
    PreparedStatement capture;
    PreparedStatement selectOne;

    @Setup(Level.Trial)
    public void start() throws SQLException {
      pg = BenchCluster.start();
      pg.createDatabase("jmh");
      Catalog.install(pg.dataSource("jmh"));
      connection = pg.connect("jmh");
      capture = connection.prepareStatement("select gnomon.coordinate()");
      selectOne = connection.prepareStatement("select 1");
    }

    @TearDown(Level.Trial)
    public void stop() throws SQLException {
      connection.close();
      pg.close();
    }
  }

  @Benchmark
  public Coordinate parse(Text t) {
    return Coordinate.parse(t.text);
  }

  @Benchmark
  public String format(Text t) {
    return t.coordinate.toString();
  }

  @Benchmark
  public Coordinate roundTrip(Text t) {
    return Coordinate.parse(t.coordinate.toString());
  }

  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public Coordinate capture(Database d) throws SQLException {
    try (ResultSet rs = d.capture.executeQuery()) {
      rs.next();
      return Coordinate.parse(rs.getString(1));
    }
  }

  @Benchmark
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public int selectOne(Database d) throws SQLException {
    try (ResultSet rs = d.selectOne.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }
}

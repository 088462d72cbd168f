package io.gnomon.checker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How a check runs. Build with {@link #builder()}; {@link Builder#build()} reports every invalid field at once, each
 * message naming its command-line option. {@link #KNOBS} lists every knob with its default and meaning.
 *
 * @param duration how long the workload runs
 * @param sessions concurrent client sessions
 * @param tables tracked tables (each with an untracked shadow)
 * @param branches branches forked during the run; sessions read and write them
 * @param scratch scratch (unlogged) branches forked during the run: a crash or failover empties them
 * @param isolations the isolation levels transactions pick from: {@code rc}, {@code rr}, {@code ser}
 * @param faults the fault kinds to inject: {@code kill}, {@code restart}, {@code failover}; empty for none
 * @param standby {@code sync} (a failover loses no acknowledged commit) or {@code async} (it may: the losses are
 *     reported, and what survived is verified)
 * @param seed the seed of every random choice (workload and fault schedule)
 * @param reportDir where the report goes
 * @param mutant the deliberately broken variant to run against, or null for Gnomon as it is
 * @param logging whether the history is logged (off only for the benchmark's baseline; nothing is verified then)
 * @param cModule the optional C module's library to write through ({@code gnomon.use_c_module(true, cModule)}:
 *     an absolute path, or {@code gnomon} for the one installed in {@code $libdir}), or null for the PL/pgSQL triggers
 */
public record CheckConfig(
    Duration duration,
    int sessions,
    int tables,
    int branches,
    int scratch,
    List<String> isolations,
    List<String> faults,
    String standby,
    long seed,
    Path reportDir,
    SqlMutant mutant,
    boolean logging,
    String cModule) {

  /** Every knob: option → "default — meaning". */
  public static final Map<String, String> KNOBS = knobs();

  /** The isolation levels, by option value. */
  public static final List<String> ISOLATIONS = List.of("rc", "rr", "ser");

  /** The fault kinds, by option value. */
  public static final List<String> FAULTS = List.of("kill", "restart", "failover");

  /** The standby modes, by option value. */
  public static final List<String> STANDBYS = List.of("sync", "async");

  /** Whether failover may lose acknowledged commits (an asynchronous standby). */
  public boolean asyncStandby() {
    return "async".equals(standby);
  }

  public CheckConfig {
    isolations = List.copyOf(isolations);
    faults = List.copyOf(faults);
    Objects.requireNonNull(reportDir, "reportDir");
  }

  private static Map<String, String> knobs() {
    Map<String, String> k = new LinkedHashMap<>();
    k.put("duration", "40s — how long the workload runs (s, m or ms suffix); setup, faults and verification add about 30 s");
    k.put("sessions", "8 — concurrent client sessions, 1 to 64");
    k.put("tables", "3 — tracked tables, each with an untracked shadow, 1 to 20");
    k.put("branches", "3 — branches forked during the run (odd ones from main, even ones from the previous: nested), 0 to 20");
    k.put("scratch", "4 — scratch (unlogged) branches forked during the run (odd ones from main or a branch, even ones "
        + "from the previous scratch one: nested); a crash or failover empties them, 0 to 20");
    k.put("isolation", "all — rc, rr, ser, or all: the levels transactions pick from (comma-separated)");
    k.put("faults", "kill,restart,failover — the faults to inject, or none (with GNOMON_JDBC_URL: kill only)");
    k.put("standby", "sync — the failover standby: sync (a failover must lose no acknowledged commit) or async (it may: "
        + "what was lost is reported, and what survived is verified)");
    k.put("seed", "random — the seed of the workload and of the fault schedule; printed, so a run can be repeated");
    k.put("report", ".gnomon/check/<time>-<seed> — the report's directory");
    k.put("mutant", "none — run against a deliberately broken Gnomon (see --list-mutants); must end in exit 1");
    k.put("c-module", "off — write through Gnomon's optional C module: the library's absolute path (gnomon-c/gnomon.so "
        + "after a build), or installed for $libdir/gnomon; the standby needs it at the same path");
    return k;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Collects the fields; {@link #build()} validates them all. */
  public static final class Builder {
    private Duration duration = Duration.ofSeconds(40);
    private int sessions = 8;
    private int tables = 3;
    private int branches = 3;
    private int scratch = 4;
    private String standby = "sync";
    private List<String> isolations = ISOLATIONS;
    private List<String> faults = FAULTS;
    private Long seed;
    private Path reportDir;
    private String mutant;
    private boolean logging = true;
    private String cModule;
    private final List<String> problems = new ArrayList<>();

    private Builder() {}

    public Builder duration(Duration d) {
      this.duration = d;
      return this;
    }

    public Builder sessions(int n) {
      this.sessions = n;
      return this;
    }

    public Builder tables(int n) {
      this.tables = n;
      return this;
    }

    public Builder branches(int n) {
      this.branches = n;
      return this;
    }

    public Builder scratch(int n) {
      this.scratch = n;
      return this;
    }

    /** {@code sync} or {@code async}. */
    public Builder standby(String mode) {
      this.standby = mode;
      return this;
    }

    /** {@code rc}, {@code rr}, {@code ser}, or {@code all}. */
    public Builder isolations(List<String> levels) {
      List<String> out = new ArrayList<>();
      for (String l : levels) {
        if ("all".equals(l)) {
          out.addAll(ISOLATIONS);
        } else if (ISOLATIONS.contains(l)) {
          out.add(l);
        } else {
          problems.add("--isolation: unknown level '" + l + "'; use rc, rr, ser or all (comma-separated)");
        }
      }
      this.isolations = out.stream().distinct().toList();
      return this;
    }

    /** {@code kill}, {@code restart}, {@code failover}, or {@code none}. */
    public Builder faults(List<String> kinds) {
      List<String> out = new ArrayList<>();
      for (String k : kinds) {
        if ("none".equals(k)) {
          continue;
        }
        if (FAULTS.contains(k)) {
          out.add(k);
        } else {
          problems.add("--faults: unknown fault '" + k + "'; use kill, restart, failover (comma-separated) or none");
        }
      }
      this.faults = out.stream().distinct().toList();
      return this;
    }

    public Builder seed(long s) {
      this.seed = s;
      return this;
    }

    public Builder reportDir(Path dir) {
      this.reportDir = dir;
      return this;
    }

    public Builder mutant(String name) {
      this.mutant = name;
      return this;
    }

    /** The C module's library: an absolute path, {@code installed} for {@code $libdir/gnomon}, or {@code off}. */
    public Builder cModule(String library) {
      this.cModule = library;
      return this;
    }

    public Builder logging(boolean on) {
      this.logging = on;
      return this;
    }

    /**
     * Validates every field.
     *
     * @throws IllegalArgumentException listing every problem, one per line, each naming its option
     */
    public CheckConfig build() {
      List<String> p = new ArrayList<>(problems);
      if (duration == null || duration.toMillis() < 1000 || duration.toHours() > 24) {
        p.add("--duration must be between 1s and 24h, got " + duration);
      }
      if (sessions < 1 || sessions > 64) {
        p.add("--sessions must be between 1 and 64, got " + sessions);
      }
      if (tables < 1 || tables > 20) {
        p.add("--tables must be between 1 and 20, got " + tables);
      }
      if (branches < 0 || branches > 20) {
        p.add("--branches must be between 0 and 20, got " + branches);
      }
      if (scratch < 0 || scratch > 20) {
        p.add("--scratch must be between 0 and 20, got " + scratch);
      }
      if (!STANDBYS.contains(standby)) {
        p.add("--standby: unknown mode '" + standby + "'; use sync or async");
      }
      if (isolations.isEmpty() && problems.isEmpty()) {
        p.add("--isolation names no level; use rc, rr, ser or all");
      }
      SqlMutant m = null;
      if (mutant != null) {
        m = SqlMutant.byName(mutant).orElse(null);
        if (m == null) {
          p.add("--mutant: no mutant is called '" + mutant + "'; ./gnomon check --list-mutants lists them");
        } else if (!m.available()) {
          p.add("--mutant " + mutant + " is a slot for a feature that is not built yet: " + m.description());
        } else if ((m == SqlMutant.BRANCH_IGNORES_CUTOFF || m == SqlMutant.MERGE_DROPS_SIDE) && branches == 0) {
          p.add("--mutant " + mutant + " needs branches: give --branches 1 or more");
        }
      }
      String library = null;
      if (cModule != null && !"off".equals(cModule)) {
        if ("installed".equals(cModule)) {
          library = "gnomon";
        } else if (!Path.of(cModule).isAbsolute() || !java.nio.file.Files.isRegularFile(Path.of(cModule))) {
          p.add("--c-module: '" + cModule + "' is not an absolute path to a file; give the library's absolute path "
              + "(gnomon-c/gnomon.so after a build), installed for $libdir/gnomon, or off");
        } else {
          library = cModule;
        }
      }
      if (library != null && m != null) {
        p.add("--c-module with --mutant: the mutants patch the PL/pgSQL functions, which the C write path bypasses; "
            + "run mutants without --c-module");
      }
      if (!p.isEmpty()) {
        throw new IllegalArgumentException(String.join("\n", p));
      }
      long s = seed != null ? seed : ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
      Path dir = reportDir != null ? reportDir : Path.of(".gnomon", "check",
          java.time.LocalDateTime.now().withNano(0).toString().replace(':', '-') + "-seed-" + s);
      return new CheckConfig(duration, sessions, tables, branches, scratch, isolations, faults, standby, s, dir, m,
          logging, library);
    }
  }
}

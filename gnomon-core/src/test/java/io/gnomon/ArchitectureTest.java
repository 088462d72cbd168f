package io.gnomon;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shape of Gnomon's code, checked on every production class of every Gnomon module on this test's class path
 * ({@code io.gnomon..}: core, sql, testkit):
 *
 * <ul>
 *   <li>a public signature never mentions a private type: no public or protected member of an exported class outside
 *       {@code ..internal..} has a parameter, return, field, thrown or type-parameter type from {@code ..internal..}
 *       (which includes the generated jOOQ classes in {@code io.gnomon.sql.internal.generated}), and no exported class
 *       extends or implements one;
 *   <li>dependencies point one way: nothing in {@code io.gnomon.sql..} depends on a Gnomon class outside it.
 * </ul>
 *
 * <p>The last tests check that the rules can fail, on deliberately bad classes nested here (this class is public so that
 * its public nested fixtures count as exported API).
 */
public class ArchitectureTest {
  private static final String INTERNAL = "..internal..";

  private static JavaClasses production;

  @BeforeAll
  static void importProductionClasses() {
    // Only Gnomon's classes matter; resolving every referenced library class (jOOQ, Flyway, …) from the class path
    // would make the import take many seconds. Referenced classes still carry their names and packages.
    production =
        withoutResolving(
            () ->
                new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages("io.gnomon"));
  }

  private static JavaClasses withoutResolving(Supplier<JavaClasses> importer) {
    ArchConfiguration config = ArchConfiguration.get();
    boolean resolve = config.resolveMissingDependenciesFromClassPath();
    config.setResolveMissingDependenciesFromClassPath(false);
    try {
      return importer.get();
    } finally {
      config.setResolveMissingDependenciesFromClassPath(resolve);
    }
  }

  /** A class that other packages can see: public, and (if nested) inside an exported class. */
  static boolean isExported(JavaClass c) {
    if (!c.getModifiers().contains(JavaModifier.PUBLIC)) {
      return false;
    }
    Optional<JavaClass> enclosing = c.getEnclosingClass();
    return enclosing.isEmpty() || isExported(enclosing.get());
  }

  static boolean isInternal(JavaClass c) {
    return c.getPackageName().matches("(.*\\.)?internal(\\..*)?");
  }

  static final DescribedPredicate<JavaClass> EXPORTED_API =
      DescribedPredicate.describe(
          "are exported (public, outside ..internal..)", c -> isExported(c) && !isInternal(c) && !c.isAnonymousClass());

  /** Every public or protected member's signature, and the class's supertypes, mention no internal type. */
  static final ArchCondition<JavaClass> NOT_EXPOSE_INTERNAL_TYPES =
      new ArchCondition<>("not mention a type from " + INTERNAL + " in a public or protected signature") {
        @Override
        public void check(JavaClass c, ConditionEvents events) {
          for (String leak : internalTypesExposedBy(c)) {
            events.add(SimpleConditionEvent.violated(c, leak));
          }
        }
      };

  /** Descriptions of each place where an exported class's API mentions an internal type. */
  static List<String> internalTypesExposedBy(JavaClass c) {
    List<String> leaks = new ArrayList<>();
    for (JavaType supertype : supertypes(c)) {
      for (JavaClass t : internalTypesIn(Set.of(supertype))) {
        leaks.add(c.getName() + " extends or implements " + supertype.getName() + ", which mentions internal " + t.getName());
      }
    }
    for (JavaMember m : c.getMembers()) {
      if (!(m.getModifiers().contains(JavaModifier.PUBLIC) || m.getModifiers().contains(JavaModifier.PROTECTED))) {
        continue;
      }
      Set<JavaType> signature = new LinkedHashSet<>();
      if (m instanceof JavaField f) {
        signature.add(f.getType());
      } else if (m instanceof JavaCodeUnit u) {
        signature.add(u.getReturnType());
        signature.addAll(u.getParameterTypes());
        signature.addAll(u.getTypeParameters());
        signature.addAll(u.getThrowsClause().getTypes());
      }
      for (JavaClass t : internalTypesIn(signature)) {
        leaks.add(m.getFullName() + " mentions internal type " + t.getName() + " in its signature");
      }
    }
    return leaks;
  }

  private static List<JavaType> supertypes(JavaClass c) {
    List<JavaType> types = new ArrayList<>();
    c.getSuperclass().ifPresent(types::add);
    types.addAll(c.getInterfaces());
    return types;
  }

  private static Set<JavaClass> internalTypesIn(Set<? extends JavaType> types) {
    // in name order, so messages come out the same on every run
    Set<JavaClass> found = new TreeSet<>(Comparator.comparing(JavaClass::getName));
    for (JavaType t : types) {
      for (JavaClass raw : t.getAllInvolvedRawTypes()) {
        JavaClass base = raw.getBaseComponentType();
        if (base.getPackageName().startsWith("io.gnomon") && isInternal(base)) {
          found.add(base);
        }
      }
    }
    return found;
  }

  static final ArchRule PUBLIC_API_HIDES_INTERNAL_TYPES =
      classes()
          .that(EXPORTED_API)
          .and(resideInAPackage("io.gnomon.."))
          .should(NOT_EXPOSE_INTERNAL_TYPES)
          .because("internal packages (and the generated jOOQ classes) are private API that may change in any release");

  static final ArchRule SQL_LAYER_DEPENDS_ON_NOTHING_ABOVE =
      noClasses()
          .that()
          .resideInAPackage("io.gnomon.sql..")
          .should()
          .dependOnClassesThat(
              DescribedPredicate.describe(
                  "are Gnomon classes outside io.gnomon.sql..",
                  c -> c.getPackageName().startsWith("io.gnomon") && !c.getPackageName().startsWith("io.gnomon.sql")))
          .because("dependencies point one way: gnomon-sql <- gnomon-core <- gnomon-feed <- checker, bench");

  @Test
  void publicSignaturesNeverMentionInternalTypes() {
    PUBLIC_API_HIDES_INTERNAL_TYPES.check(production);
  }

  @Test
  void sqlLayerDependsOnNoGnomonClassAboveIt() {
    SQL_LAYER_DEPENDS_ON_NOTHING_ABOVE.check(production);
  }

  @Test
  void importSeesCoreAndSqlClasses() {
    // a rule over an empty or partial import passes vacuously: make sure both modules were imported
    assertTrue(production.contain(Gnomon.class), "gnomon-core classes were not imported");
    assertTrue(production.contain(io.gnomon.sql.Catalog.class), "gnomon-sql classes were not imported");
    assertTrue(
        production.contain(io.gnomon.sql.internal.generated.DefaultCatalog.class),
        "the generated jOOQ classes were not imported");
  }

  // ---- The rules can fail: deliberately bad classes (test classes, so the production import never sees them). ----

  /** Leaks a generated jOOQ type through a field, a return type, a generic parameter, a supertype and a throws clause. */
  public static class LeakyApi implements java.util.function.Supplier<io.gnomon.sql.internal.generated.DefaultCatalog> {
    public io.gnomon.sql.internal.generated.DefaultCatalog catalog;

    @Override
    public io.gnomon.sql.internal.generated.DefaultCatalog get() {
      return catalog;
    }

    public void use(List<? extends io.gnomon.sql.internal.generated.DefaultCatalog> catalogs) {}

    protected <T extends io.gnomon.sql.internal.generated.DefaultCatalog> void bounded(T t) {}

    // private members and package-private classes may use internal types freely
    private io.gnomon.sql.internal.generated.DefaultCatalog hidden() {
      return catalog;
    }
  }

  /** Package-private: not API, so its public members may mention internal types. */
  static class NotExported {
    public io.gnomon.sql.internal.generated.DefaultCatalog catalog;
  }

  @Test
  void signatureRuleCatchesEveryKindOfLeak() {
    JavaClasses bad = withoutResolving(() -> new ClassFileImporter().importClasses(ArchitectureTest.class, LeakyApi.class, NotExported.class));
    EvaluationResult result = PUBLIC_API_HIDES_INTERNAL_TYPES.evaluate(bad);
    assertTrue(result.hasViolation());
    List<String> details = result.getFailureReport().getDetails();
    String all = String.join("\n", details);
    assertTrue(all.contains("LeakyApi.catalog"), all);
    assertTrue(all.contains("LeakyApi.get()"), all);
    assertTrue(all.contains("LeakyApi.use(java.util.List)"), all);
    assertTrue(all.contains("LeakyApi.bounded("), all);
    assertTrue(all.contains("extends or implements java.util.function.Supplier"), all);
    assertFalse(all.contains("hidden"), all);
    assertFalse(all.contains("NotExported"), all);
    // a synthetic bridge get() returning Object exists too; it mentions no internal type
    assertEquals(5, details.size(), all);
  }

  /**
   * Compiles a throwaway gnomon-sql class that uses a core class (and one that uses only gnomon-sql) and checks that
   * the dependency rule flags exactly the first.
   */
  @Test
  void dependencyRuleCatchesSqlDependingOnCore(@TempDir Path dir) throws IOException {
    Path src = dir.resolve("src");
    Path out = dir.resolve("classes");
    List<Path> sources =
        List.of(
            write(src, "io/gnomon/Upper.java", "package io.gnomon; public final class Upper {}"),
            write(
                src,
                "io/gnomon/sql/Lower.java",
                "package io.gnomon.sql; public final class Lower { Object upper() { return new io.gnomon.Upper(); } }"),
            write(src, "io/gnomon/sql/Fine.java", "package io.gnomon.sql; public final class Fine { Lower lower; }"));
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "tests need a JDK, not a JRE");
    List<String> args = new ArrayList<>(List.of("-d", out.toString()));
    sources.forEach(p -> args.add(p.toString()));
    assertEquals(0, javac.run(null, null, null, args.toArray(String[]::new)), "compiling the fixtures");

    JavaClasses bad = withoutResolving(() -> new ClassFileImporter().importPath(out));
    EvaluationResult result = SQL_LAYER_DEPENDS_ON_NOTHING_ABOVE.evaluate(bad);
    String all = String.join("\n", result.getFailureReport().getDetails());
    assertTrue(result.hasViolation(), "the rule let gnomon-sql use a core class");
    assertTrue(all.contains("io.gnomon.sql.Lower") && all.contains("io.gnomon.Upper"), all);
    assertFalse(all.contains("io.gnomon.sql.Fine"), all);
  }

  private static Path write(Path root, String file, String text) throws IOException {
    Path p = root.resolve(file);
    Files.createDirectories(p.getParent());
    return Files.writeString(p, text);
  }
}

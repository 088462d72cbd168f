package io.gnomon.feed;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
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
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The feed's public API ({@code io.gnomon.feed}) never mentions a private type ({@code ..internal..}, including the
 * generated jOOQ classes) in a public or protected signature or a supertype; every internal package says it is
 * private. The same rule as gnomon-core's ArchitectureTest, applied to this module.
 */
class FeedArchitectureTest {

  private static JavaClasses feedClasses() {
    ArchConfiguration config = ArchConfiguration.get();
    boolean resolve = config.resolveMissingDependenciesFromClassPath();
    config.setResolveMissingDependenciesFromClassPath(false);
    try {
      return new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.gnomon.feed");
    } finally {
      config.setResolveMissingDependenciesFromClassPath(resolve);
    }
  }

  private static boolean internal(JavaClass c) {
    return c.getPackageName().matches("(.*\\.)?internal(\\..*)?");
  }

  private static final ArchCondition<JavaClass> HIDE_INTERNAL_TYPES =
      new ArchCondition<>("not mention an internal type in a public or protected signature") {
        @Override
        public void check(JavaClass c, ConditionEvents events) {
          List<JavaType> types = new ArrayList<>();
          c.getSuperclass().ifPresent(types::add);
          types.addAll(c.getInterfaces());
          for (JavaType t : types) {
            leaks(Set.of(t)).forEach(l -> events.add(SimpleConditionEvent.violated(c, c.getName() + " extends " + l)));
          }
          for (JavaMember m : c.getMembers()) {
            if (!m.getModifiers().contains(JavaModifier.PUBLIC) && !m.getModifiers().contains(JavaModifier.PROTECTED)) {
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
            leaks(signature).forEach(l -> events.add(SimpleConditionEvent.violated(c, m.getFullName() + " mentions " + l)));
          }
        }
      };

  private static List<String> leaks(Set<JavaType> types) {
    List<String> out = new ArrayList<>();
    for (JavaType t : types) {
      for (JavaClass raw : t.getAllInvolvedRawTypes()) {
        JavaClass base = raw.getBaseComponentType();
        if (base.getPackageName().startsWith("io.gnomon") && internal(base)) {
          out.add(base.getName());
        }
      }
    }
    return out;
  }

  @Test
  void publicSignaturesNeverMentionInternalTypes() {
    JavaClasses classes = feedClasses();
    assertTrue(classes.contain(Feed.class) && classes.contain(io.gnomon.feed.internal.PageReader.class));
    classes()
        .that(DescribedPredicate.describe("are exported feed API",
            (JavaClass c) -> c.getModifiers().contains(JavaModifier.PUBLIC) && !internal(c)
                && c.getEnclosingClass().map(e -> e.getModifiers().contains(JavaModifier.PUBLIC)).orElse(true)))
        .should(HIDE_INTERNAL_TYPES)
        .because("io.gnomon.feed.internal and the generated jOOQ classes are private API")
        .check(classes);
  }

  @Test
  void internalPackagesSayTheyArePrivate() throws Exception {
    String info = java.nio.file.Files.readString(
        java.nio.file.Path.of("src/main/java/io/gnomon/feed/internal/package-info.java"));
    assertTrue(info.contains("Private API"), info);
  }
}

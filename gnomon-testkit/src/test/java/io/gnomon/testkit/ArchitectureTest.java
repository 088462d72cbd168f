package io.gnomon.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The public API is small, final and never mentions internal types. */
class ArchitectureTest {

  private static final String API = "io.gnomon.testkit";
  private static final JavaClasses CLASSES =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPath(Path.of("target/classes"));

  @Test
  void publicSignaturesDoNotMentionInternalTypes() {
    List<String> leaks = new ArrayList<>();
    for (JavaClass c : apiClasses()) {
      for (JavaCodeUnit u : c.getCodeUnits()) {
        if (!exposed(u.getModifiers())) {
          continue;
        }
        u.getReturnType().getAllInvolvedRawTypes().forEach(t -> check(leaks, u.getFullName(), t));
        u.getParameterTypes()
            .forEach(p -> p.getAllInvolvedRawTypes().forEach(t -> check(leaks, u.getFullName(), t)));
        u.getExceptionTypes().forEach(t -> check(leaks, u.getFullName(), t));
      }
      for (JavaField f : c.getFields()) {
        if (exposed(f.getModifiers())) {
          f.getType().getAllInvolvedRawTypes().forEach(t -> check(leaks, f.getFullName(), t));
        }
      }
      c.getRawSuperclass().ifPresent(s -> check(leaks, c.getName(), s));
      c.getRawInterfaces().forEach(i -> check(leaks, c.getName(), i));
    }
    assertEquals(List.of(), leaks);
  }

  @Test
  void publicClassesAreFinalUnlessDesignedForExtension() {
    Set<String> open = Set.of(PgClusterException.class.getName());
    List<String> notFinal = new ArrayList<>();
    for (JavaClass c : apiClasses()) {
      if (c.isInterface() || c.isEnum() || c.isRecord() || open.contains(c.getName())) {
        continue;
      }
      if (!c.getModifiers().contains(JavaModifier.FINAL)) {
        notFinal.add(c.getName());
      }
    }
    assertEquals(List.of(), notFinal);
  }

  @Test
  void internalPackageSaysItIsPrivate() throws IOException {
    Path info = Path.of("src/main/java/io/gnomon/testkit/internal/package-info.java");
    assertTrue(Files.readString(info).contains("Private API"), info + " must say Private API");
  }

  private static List<JavaClass> apiClasses() {
    List<JavaClass> out = new ArrayList<>();
    for (JavaClass c : CLASSES) {
      if (c.getPackageName().equals(API)
          && c.getModifiers().contains(JavaModifier.PUBLIC)
          && !c.getSimpleName().equals("package-info")) {
        out.add(c);
      }
    }
    return out;
  }

  private static boolean exposed(Set<JavaModifier> modifiers) {
    return modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED);
  }

  private static void check(List<String> leaks, String member, JavaClass type) {
    if (type.getPackageName().startsWith(API + ".internal")) {
      leaks.add(member + " exposes " + type.getName());
    }
  }
}

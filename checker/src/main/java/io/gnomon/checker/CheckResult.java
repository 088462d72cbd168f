package io.gnomon.checker;

import io.gnomon.checker.verify.Verification;
import java.nio.file.Path;
import java.util.Map;

/**
 * How a check ended.
 *
 * @param status 0 valid, 1 a violation was found, 2 the run could not be carried out
 * @param verdict the verdict line
 * @param verification what the verifier found (null when the run could not be carried out)
 * @param reportDir the report's directory
 * @param counts the run's counts, as the report shows them
 */
public record CheckResult(int status, String verdict, Verification verification, Path reportDir,
    Map<String, Object> counts) {

  public static final int VALID = 0;
  public static final int VIOLATION = 1;
  public static final int COULD_NOT_RUN = 2;
}

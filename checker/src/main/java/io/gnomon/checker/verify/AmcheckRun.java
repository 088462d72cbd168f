package io.gnomon.checker.verify;

/**
 * One pg_amcheck run over the checker's database.
 *
 * @param when after what it ran ({@code after restart #2}, {@code at the end})
 * @param status {@code clean}, {@code corrupt}, or {@code unavailable} (no pg_amcheck binary or amcheck extension)
 * @param output what pg_amcheck printed (its findings), or why it could not run
 */
public record AmcheckRun(String when, String status, String output) {}

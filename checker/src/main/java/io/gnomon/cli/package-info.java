/**
 * Gnomon's command line, run by {@code ./gnomon} at the repository root: {@link io.gnomon.cli.Main} dispatches to
 * one command class per subcommand ({@code demo}, {@code check}, {@code install}, {@code fuzz}). Only
 * {@code Main} is public; the commands are package-private.
 */
package io.gnomon.cli;

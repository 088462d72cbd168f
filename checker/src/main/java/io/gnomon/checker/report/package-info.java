/**
 * A check's report: {@code result.json}, a self-contained {@code index.html} with SVG plots (no script, no server),
 * and the console summary. Part of the checker's implementation, not an API.
 */
package io.gnomon.checker.report;

/**
 * The history checker ({@code ./gnomon check}): {@link io.gnomon.checker.Checker} runs a check configured by {@link
 * io.gnomon.checker.CheckConfig} and returns a {@link io.gnomon.checker.CheckResult}; {@link
 * io.gnomon.checker.SqlMutant} names the deliberately broken variants it must catch. The subpackages are its
 * implementation, for the command line and the benchmarks only: the history log ({@code history}), the run on a
 * cluster with its faults ({@code run}), the verifier ({@code verify}) and the report ({@code report}).
 */
package io.gnomon.checker;

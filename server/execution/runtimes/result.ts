// The HTTP runtime's result shapes for runtimes that produce a JSON value instead of an HTTP
// response: the value is serialised once and shaped by the same compact/verbose rules (8 KiB cap).
import { compactResult, verboseResult } from '../../../core/execution/result.ts';
import type { ExecuteOutput } from '../execute.ts';

export interface JsonAnswer {
  /** The HTTP-like status the result reports (`status_code`, and the execution's http_status_code). */
  status: number;
  /** What the compact result's `body` carries. */
  body: unknown;
  /** What the verbose result's raw `body` string serialises; defaults to `body`. */
  raw?: unknown;
  durationMs: number;
}

export function jsonOutput(answer: JsonAnswer, verbose: boolean): ExecuteOutput {
  const headers = { 'content-type': 'application/json' };
  const text = (v: unknown) => JSON.stringify(v) ?? 'null';
  const result = verbose
    ? verboseResult({ status: answer.status, headers, bodyText: text(answer.raw !== undefined ? answer.raw : answer.body), durationMs: answer.durationMs })
    : compactResult({ status: answer.status, headers, bodyText: text(answer.body), durationMs: answer.durationMs });
  return { result, httpStatusCode: answer.status };
}

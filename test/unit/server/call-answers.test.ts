// What an approved call's rows answer (server/calls/call-answers.ts approvalAnswer): the one
// reading a resume and a keyed retry share, so they never disagree with GET /v1/calls/{id}.
import { describe, expect, it } from 'vitest';
import { approvalAnswer } from '../../../server/calls/call-answers.ts';
import { AppError } from '../../../server/errors.ts';

type Approval = Parameters<typeof approvalAnswer>[0];
type Execution = NonNullable<Parameters<typeof approvalAnswer>[1]>;

const approval = (status: Approval['status'], more: Partial<Approval> = {}): Approval => ({ status, reason: null, edit_diff: null, edited_description: null, ...more });
const execution = (status: Execution['status'], more: Partial<Execution> = {}): Execution => ({ status, result: null, error: null, ...more });
const conflictOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? { code: err.code, message: err.message } : err;
  }
  return null;
};

describe('approvalAnswer', () => {
  it('is null while the approval is open or its execution has not run: the workflow answers then', () => {
    expect(approvalAnswer(approval('pending'), null, 'd')).toBeNull();
    expect(approvalAnswer(approval('bubbled'), null, 'd')).toBeNull();
    expect(approvalAnswer(approval('allowed'), execution('pending'), 'd')).toBeNull();
    expect(approvalAnswer(approval('allowed'), execution('executing'), 'd')).toBeNull();
  });

  it('answers the execution that ran: called with its result, or its error (outcome_unknown included)', () => {
    const result = { status_code: 201, duration_ms: 5, body: { ok: true } };
    expect(approvalAnswer(approval('allowed'), execution('executed', { result }), 'Create item')).toEqual({ status: 'called', result, action_description: 'Create item' });
    const error = { code: 'outcome_unknown', message: 'may have reached the upstream' };
    expect(approvalAnswer(approval('allowed'), execution('failed', { error }), 'd')).toEqual({ status: 'error', error });
  });

  it('tells what an approver\'s edit changed, with the edited description', () => {
    const diff = [{ field: 'params.name', before: 'a', after: 'b' }];
    const answer = approvalAnswer(approval('allowed', { edit_diff: diff, edited_description: 'Create item "b"' }), execution('executed', { result: { status_code: 200 } }), 'Create item "a"');
    expect(answer).toMatchObject({ status: 'called', action_description: 'Create item "b"', modified_by_approver: true, diff });
  });

  it('answers denied, and conflict for an approval or execution that closed without running', () => {
    expect(approvalAnswer(approval('denied', { reason: 'not today' }), null, 'd')).toEqual({ status: 'denied', reason: 'not today' });
    expect(conflictOf(() => approvalAnswer(approval('expired'), null, 'd'))).toEqual({ code: 'conflict', message: 'the approval is expired' });
    expect(conflictOf(() => approvalAnswer(approval('allowed'), execution('cancelled'), 'd'))).toEqual({ code: 'conflict', message: 'the execution is cancelled' });
  });
});

/** The messaging vocabulary the workflows check their input with. Imports only its own layer. */
import { check, firstProblem, Problem } from './workflow-input';

/** Why a send's input is refused, or null: a send carries its log row's id (a bigint, as text) and nothing else. */
export const sendEmailInputProblem = (input: unknown): Problem => firstProblem(input, (given) => [check.pattern('logId', given.logId, '^[1-9][0-9]{0,18}$')]);

/** Why a role send's input is refused, or null. */
export const sendEmailToRoleInputProblem = (input: unknown): Problem => firstProblem(input, (given) => [check.uuid('batchId', given.batchId)]);

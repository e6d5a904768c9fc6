import { Alert, List, Text } from '@mantine/core';
import { ProblemError } from '../api/client';

/** A problem as the API worded it: its title, its stable code, its detail and each field's message. */
export function ProblemAlert({ error }: { error: unknown }) {
  const problem = error instanceof ProblemError ? error.problem : { title: String(error), code: 'UNKNOWN', detail: undefined, errors: undefined };
  return (
    <Alert color="red" role="alert" title={problem.title}>
      <Text size="sm" fw={700} data-testid="problem-code">
        {problem.code}
      </Text>
      {problem.detail && <Text size="sm">{problem.detail}</Text>}
      {problem.errors && problem.errors.length > 0 && (
        <List size="sm">
          {problem.errors.map((issue) => (
            <List.Item key={`${issue.path}:${issue.message}`}>
              {issue.path}: {issue.message}
            </List.Item>
          ))}
        </List>
      )}
    </Alert>
  );
}

/** The API's message for one field of a refused body (`body.retentionDays`), shown inline beside that field. */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ProblemError)) return undefined;
  const issue = error.problem.errors?.find((candidate) => candidate.path === `body.${field}` || candidate.path.endsWith(`.${field}`));
  return issue?.message;
}

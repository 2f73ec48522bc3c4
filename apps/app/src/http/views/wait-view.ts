import { z } from 'zod';

export const WaitParams = z.object({
  runId: z.string().describe('The paused (or running) run.'),
  path: z
    .string()
    .describe("The wait step's path in the run, URI-encoded (`approval`, `each%5B2%5D%2Freply`)."),
  token: z.string().describe("The URL's credential, as `{{waits.<name>.resumeUrl}}` gives it."),
});

export const WaitAnsweredView = z.object({ runId: z.uuid(), resumed: z.literal(true) }).meta({
  id: 'WaitAnswered',
  description:
    "The wait's answer is kept: the run resumes (at once when it is paused; when it pauses, if it has not reached the wait yet).",
});

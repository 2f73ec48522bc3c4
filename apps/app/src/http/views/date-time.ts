import { z } from 'zod';

/**
 * A moment as the API writes it: ISO 8601 in UTC (`Date#toJSON`). Views describe the JSON on the
 * wire, so a record's Date is serialized before its view checks it (view-serializer.ts).
 */
export const DateTime = z.iso.datetime();

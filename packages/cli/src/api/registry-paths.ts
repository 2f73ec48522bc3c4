// Interim: the registry's routes as its contract states them, until they are in docs/openapi.json.
interface ErrorContent {
  content: { 'application/json': { error: { code: string; message: string } } };
}
export interface RegistryPaths {
  '/v1/pieces': {
    get: {
      responses: {
        200: {
          content: { 'application/json': { pieces: { name: string; latest: string; versions: string[] }[] } };
        };
      };
    };
    post: {
      requestBody: { content: { 'application/json': { manifest: unknown; archive: string } } };
      responses: {
        200: { content: { 'application/json': { piece: unknown } } };
        201: { content: { 'application/json': { piece: unknown } } };
        400: ErrorContent;
        409: ErrorContent;
      };
    };
  };
  '/v1/pieces/{name}': {
    get: {
      parameters: { path: { name: string } };
      responses: {
        200: {
          content: {
            'application/json': {
              name: string;
              versions: { version: string; actions: { name: string; inputSchema: unknown }[] }[];
            };
          };
        };
        404: ErrorContent;
      };
    };
  };
}

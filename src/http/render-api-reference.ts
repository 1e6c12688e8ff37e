/** The parts of an OpenAPI 3.1 document the reference page shows. */
export interface ReferenceDocument {
  info: { title: string; version: string; description?: string };
  paths?: object;
  components?: { schemas?: Record<string, unknown> };
}

interface ReferenceOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required?: boolean; description?: string; schema?: unknown }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, ReferenceContent> }>;
}

interface ReferenceContent {
  schema?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

const httpMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Renders an OpenAPI document as one self-contained HTML page: no script, no stylesheet from elsewhere. */
export function renderApiReference(document: ReferenceDocument): string {
  const paths = Object.entries(document.paths ?? {}) as Array<[string, Record<string, ReferenceOperation>]>;
  const operations = paths.flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => httpMethods.has(method))
      .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
  const schemas = Object.entries(document.components?.schemas ?? {});
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(document.info.title)} reference</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { background: #f5f5f7; padding: .75rem; overflow-x: auto; }
section { border-top: 1px solid #ddd; margin-top: 1.5rem; }
.method { font-weight: bold; }
table { border-collapse: collapse; } td, th { text-align: left; padding: .2rem .6rem .2rem 0; vertical-align: top; }
</style>
</head>
<body>
<h1>${escape(document.info.title)} <small>version ${escape(document.info.version)}</small></h1>
<p>${inline(document.info.description ?? '')}</p>
<p>The machine-readable document is <a href="openapi.json"><code>openapi.json</code></a>. Routes marked
<em>API key</em> need <code>Authorization: Bearer &lt;key&gt;</code> or <code>x-api-key: &lt;key&gt;</code>.</p>
<ul>
${operations.map(({ path, method, operation }) => `<li><a href="#${anchor(operation, method, path)}"><span class="method">${method}</span> <code>${escape(path)}</code></a> ${inline(operation.summary ?? '')}</li>`).join('\n')}
</ul>
${operations.map(({ path, method, operation }) => renderOperation(path, method, operation)).join('\n')}
<section>
<h2>Schemas</h2>
${schemas.map(([name, schema]) => `<h3 id="schema-${escape(name)}">${escape(name)}</h3>\n<pre>${json(schema)}</pre>`).join('\n')}
</section>
</body>
</html>
`;
}

function renderOperation(path: string, method: string, operation: ReferenceOperation): string {
  const parameters = operation.parameters ?? [];
  const body = Object.entries(operation.requestBody?.content ?? {});
  const responses = Object.entries(operation.responses ?? {});
  const needsKey = operation.security === undefined || operation.security.length > 0;
  return `<section id="${anchor(operation, method, path)}">
<h2><span class="method">${method}</span> <code>${escape(path)}</code></h2>
<p>${inline(operation.summary ?? '')}${operation.description ? `<br>${inline(operation.description)}` : ''}</p>
<p>Operation <code>${escape(operation.operationId ?? '')}</code> · ${needsKey ? 'API key' : 'no key needed'}</p>
${
  parameters.length > 0
    ? `<table><tr><th>Parameter</th><th>In</th><th>Required</th><th>Description</th></tr>
${parameters.map((parameter) => `<tr><td><code>${escape(parameter.name)}</code></td><td>${escape(parameter.in)}</td><td>${parameter.required ? 'yes' : 'no'}</td><td>${inline(parameter.description ?? '')}</td></tr>`).join('\n')}
</table>`
    : ''
}
${body.map(([type, content]) => `<h3>Body <code>${escape(type)}</code></h3>\n<pre>${json(content.schema)}</pre>`).join('\n')}
<h3>Responses</h3>
<dl>
${responses.map(([status, response]) => `<dt><strong>${escape(status)}</strong> ${inline(response.description ?? '')}</dt>\n<dd>${renderContent(response.content ?? {})}</dd>`).join('\n')}
</dl>
</section>`;
}

function renderContent(content: Record<string, ReferenceContent>): string {
  return Object.entries(content)
    .map(([type, { schema, examples }]) => {
      const shown = Object.entries(examples ?? {}).map(
        ([name, example]) => `<p>Example <code>${escape(name)}</code>:</p>\n<pre>${json(example.value)}</pre>`,
      );
      return [`<code>${escape(type)}</code>: <pre>${json(schema)}</pre>`, ...shown].join('\n');
    })
    .join('\n');
}

function anchor(operation: ReferenceOperation, method: string, path: string): string {
  return escape(operation.operationId ?? `${method}-${path}`);
}

/** JSON with every `$ref` to a component schema turned into a link to it. */
function json(value: unknown): string {
  return escape(JSON.stringify(value ?? {}, null, 2)).replace(
    /&quot;#\/components\/schemas\/([\w-]+)&quot;/g,
    '<a href="#schema-$1">&quot;#/components/schemas/$1&quot;</a>',
  );
}

/** Text with Markdown's `code` spans, the only markup the document's descriptions use. */
function inline(text: string): string {
  return escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

const entities: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (character) => entities[character] ?? character);
}

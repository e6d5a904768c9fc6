# The API and worker image for docker-compose.yml (production). Workflows are bundled at build time so
# workers start without webpack.
# The console is built with the development packages (Vite, openapi-typescript) in a stage of its own.
FROM node:24-bookworm-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
RUN PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
COPY . .
RUN npx tsx scripts/console.ts --force

FROM node:24-bookworm-slim
WORKDIR /app
# openssl makes the Temporal cluster's certificates at first start (the migrate job).
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
# Inside a container the API listens on every interface; the compose file decides what is published.
ENV API_HOST=0.0.0.0
COPY package.json package-lock.json ./
# Development-only packages (embedded PostgreSQL, the Temporal test server, pino-pretty) stay out.
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
COPY --from=console /app/console/dist ./console/dist
RUN npx tsx -e "require('./workers/bundle').writeWorkflowBundle('/app/workflow-bundle.js')"
ENV WORKFLOW_BUNDLE_PATH=/app/workflow-bundle.js
# The mount points of the data, edge and Temporal volumes (identity, admin, tls, public), owned by the user the API
# and the migrate job run as: a named volume takes
# the ownership of its mount point in the image when it is first created.
RUN mkdir -p /data /edge /identity /temporal-admin /temporal-tls /temporal-public && chown node:node /data /edge /identity /temporal-admin /temporal-tls /temporal-public
USER node
CMD ["node", "--require", "tsx/cjs", "api/server.ts"]

package authapi

import (
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// wantsHTML reports whether the request is a browser's page load: a GET
// of one of the pages whose Accept names text/html. API calls (fetch,
// curl) keep their JSON answers.
func wantsHTML(c *gin.Context) bool {
	return c.Request.Method == http.MethodGet && isPage(c.FullPath()) &&
		strings.Contains(strings.ToLower(c.GetHeader("Accept")), "text/html")
}

// forbiddenWords are the sentences of the page a role may not open, by
// language: the page's role, the caller's, a link back to the table.
var forbiddenWords = map[string][4]string{
	"en": {"Not allowed", "This page needs the %s role; you are signed in as %s (%s).", "Back to the table", "en"},
	"zh": {"无权访问", "此页面需要%s角色；你当前以 %s（%s）登录。", "返回表格", "zh-CN"},
}

// roleWords are the roles' names in Chinese (English shows them as they
// are).
var roleWords = map[task.Role]string{task.RoleViewer: "查看者", task.RoleEditor: "编辑者", task.RoleAdmin: "管理员"}

// forbiddenPage answers 403 with a short HTML page saying which role the
// page needs and who is signed in, in the browser's language
// (Accept-Language: Chinese, else English).
func forbiddenPage(c *gin.Context, p *Principal, need task.Role, reason string) {
	lang := "en"
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.GetHeader("Accept-Language"))), "zh") {
		lang = "zh"
	}
	w := forbiddenWords[lang]
	name := func(r task.Role) string {
		if lang == "zh" && roleWords[r] != "" {
			return roleWords[r]
		}
		return string(r)
	}
	sentence := html.EscapeString(reason)
	if p != nil && !p.JobsOnly {
		sentence = html.EscapeString(fmt.Sprintf(w[1], name(need), p.User, name(p.Role)))
	}
	body := `<!doctype html><html lang="` + w[3] + `"><head><meta charset="utf-8"><link rel="icon" href="data:,">` +
		`<meta name="viewport" content="width=device-width, initial-scale=1"><title>cronsheet · ` + w[0] + `</title>` +
		`<link rel="stylesheet" href="/assets/app.css"></head><body><main><h1>` + w[0] + `</h1>` +
		`<p id="forbidden">` + sentence + `</p><p><a href="/">` + w[2] + `</a></p></main></body></html>`
	c.Data(http.StatusForbidden, "text/html; charset=utf-8", []byte(body))
	c.Abort()
}

package webtable_test

import (
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/webtable"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // tests only; main sets the mode in production
	code := m.Run()
	browsers.stop()
	os.Exit(code)
}

func TestNewWithoutStorePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("New with a nil Store did not panic")
		}
	}()
	webtable.New(webtable.Deps{})
}

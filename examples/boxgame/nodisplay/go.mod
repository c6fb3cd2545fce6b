module boxgame.local/nodisplay

go 1.26.0
